#!/bin/bash
# t_enospc: a full store.  A version that fits is committed; a bigger one
# must fail clearly with ENOSPC ("No space left on device"), not hang; the
# daemon stays up, the first version still verifies, and once space is freed
# (the failed version removed, or an old one) a new version is written.
#   tmpfs:    the store on a 96 MiB tmpfs (skipped if mounting is refused)
#   capacity: the store capped by capacity = 48M on the normal disk
# Segments are 8 MiB and write pieces 1 MiB, so that a segment holds 7 pieces
# and the sizes below leave room as intended.
# TIMEOUT: 120
set -u
. "$(dirname "$0")/lib.sh"

JOB=full/job

# full_case NAME V1SIZE V2SIZE V3SIZE RM: v1 fits, v2 does not; remove RM
# (the failed v2, or v1) and write v3.
full_case() {
	local d=$1 s1=$2 s2=$3 s3=$4 rmv=$5 st state err
	start_ckptd "$d"
	tw "$d" write "$JOB" v1 -n 2 -z "$s1" -S 1 -w local || fail "v1 ($((2 * s1)) bytes) does not fit"
	tw "$d" verify "$JOB" v1 -n 2 -z "$s1" -S 1 || fail "v1 does not verify"

	tw "$d" write "$JOB" v2 -n 2 -z "$s2" -S 2 -w local 2>"$T/$d.v2.err" &&
		fail "v2 ($((2 * s2)) bytes) was written into a store that cannot hold it"
	grep -q "No space left on device" "$T/$d.v2.err" ||
		fail "v2 failed without a clear ENOSPC: $(cat "$T/$d.v2.err")"
	info "[$d] v2: $(head -1 "$T/$d.v2.err")"
	assert_up "$d"
	st=$(tw "$d" stat "$JOB" v2) || fail "stat v2 failed"
	read -r state _ _ _ _ err <<<"$st"
	[ "$state" = failed ] || fail "v2 is '$state', want failed"
	[ "$err" = 28 ] || fail "v2 failed with errno $err, want 28 (ENOSPC)"
	tw "$d" verify "$JOB" v1 -n 2 -z "$s1" -S 1 || fail "v1 does not verify after ENOSPC"
	[ "$(tw "$d" latest "$JOB")" = v1 ] || fail "latest is not v1"

	tw "$d" rm "$JOB" "$rmv" || fail "removing $rmv failed"
	tw "$d" write "$JOB" v3 -n 2 -z "$s3" -S 3 -w local || fail "v3 failed after freeing space"
	tw "$d" verify "$JOB" v3 -n 2 -z "$s3" -S 3 || fail "v3 does not verify"
	if [ "$rmv" != v1 ]; then
		tw "$d" verify "$JOB" v1 -n 2 -z "$s1" -S 1 || fail "v1 does not verify at the end"
	fi
	# The state survives a restart.
	restart "$d"
	tw "$d" verify "$JOB" v3 -n 2 -z "$s3" -S 3 || fail "v3 does not verify after restart"
	stop_ckptd "$d"
	info "[$d] ENOSPC was clear, the daemon stayed up, freed space was reused"
}

tmpfs_case() {
	mount_tmpfs "$T/tmpfs" 96m
	ckptd_conf tmpfs store="$T/tmpfs/store" segment=8M chunk=1M capacity=0 keep=100
	full_case tmpfs $((8 << 20)) $((64 << 20)) $((16 << 20)) v2
}

capacity_case() {
	ckptd_conf cap capacity=48M segment=8M chunk=1M keep=100
	full_case cap $((8 << 20)) $((32 << 20)) $((12 << 20)) v1
}

if mkdir -p "$T/probe" && mount -t tmpfs -o size=1m ckpt-probe "$T/probe" 2>/dev/null; then
	umount "$T/probe"
	subtest tmpfs tmpfs_case
else
	info "tmpfs part skipped: mounting a tmpfs is not permitted here"
fi
subtest capacity capacity_case
finish
