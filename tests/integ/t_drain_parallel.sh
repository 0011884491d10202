#!/bin/bash
# t_drain_parallel: the drain's parallel copy (files cut into pieces copied
# by several threads, records read once, files published in batches).
# Versions of files of odd sizes, written as odd records in a scrambled
# order over junk (-R: records never line up with the 256 KiB chunks, and
# overwrite each other), with a hole of whole chunks and bytes written past
# the end and truncated away (-H); a large single file (many pieces); an
# empty file; three versions drained at once by 3 threads.
#  - plain: the PFS files are the trainer's byte for byte, no temporaries
#    are left, ckpt_read and `ckptctl restore` give them back, from the
#    local copy and, once it is dropped, from the PFS
#    (whole chunks written with O_DIRECT, the log says so: most bytes)
#  - packed (zstd, shuffle, incremental): the same through ckptd and restore
#    (nothing written with O_DIRECT)
#  - fds: 1500 small files under a limit of 600 fds: a finished file holds
#    one fd until the finisher publishes it (its O_DIRECT one is closed when
#    its last piece is done), and a copy opens no more files than a share
#    of the limit, so the version drains
#  - crash: a capped drain is SIGKILLed once some files of the version are
#    published and not all; after the restart the copy resumes from its
#    journal (it writes less than the whole version), and after two clean
#    restarts every committed byte reads back, from ckptd, the PFS and
#    `ckptctl restore`
# TIMEOUT: 300
set -u
. "$(dirname "$0")/lib.sh"

PFS=$T/pfs
mkdir -p "$PFS"

# The versions: JOB VERSION SEED NFILES SIZE (each written with -R -H).
VERSIONS=(
	"pj v1 21 3 5000017"
	"pj v2 22 1 21000003"
	"pj v3 23 2 0"
)

write_all() { # NAME
	local v
	for v in "${VERSIONS[@]}"; do
		set -- $v
		tw "$NAME" write "$1" "$2" -S "$3" -n "$4" -z "$5" -R -H -w local ||
			fail "$1/$2 was not written"
	done
}

# check_version NAME JOB VERSION SEED NFILES SIZE PLAIN: DRAINED, reads
# back through ckptd, restores byte for byte, and (plain) the PFS files are
# the trainer's.
check_version() {
	local name=$1 job=$2 ver=$3 seed=$4 n=$5 size=$6 plain=$7
	local exp=$T/exp-$name-$ver rst=$T/rst-$name-$ver
	poll_until 120 level_is "$name" "$job" "$ver" drained ||
		fail "$job/$ver not drained: $(vlevel "$name" "$job" "$ver")"
	rm -rf "$exp" "$rst"
	"$TW" expect "$job" "$ver" -S "$seed" -n "$n" -z "$size" -R -H -o "$exp" ||
		fail "ckpt_tw expect failed"
	tw "$name" verify "$job" "$ver" -S "$seed" -n "$n" -z "$size" -R -H ||
		fail "$job/$ver does not read back through ckptd"
	ctl "$name" restore "$job" "$ver" --to "$rst" >/dev/null ||
		fail "restore of $job/$ver failed"
	diff -r "$exp" "$rst" || fail "restored $job/$ver differs"
	if [ "$plain" = 1 ]; then
		diff -r "$exp" "$(pfs_vdir "$job" "$ver")/files" ||
			fail "the PFS files of $job/$ver are not the trainer's"
	fi
}

check_all() { # NAME PLAIN
	local v
	for v in "${VERSIONS[@]}"; do
		check_version "$1" $v "$2"
	done
	[ -z "$(pfs_temps)" ] || fail "temporary files left: $(pfs_temps)"
}

# check_pfs NAME PLAIN: drop the local copies (rm of a drained version),
# then check again: every byte now comes from the PFS.
check_pfs() {
	local v
	for v in "${VERSIONS[@]}"; do
		set -- $v
		ctl "$NAME" rm "$1" "$2" >/dev/null || fail "rm of the local $1/$2 failed"
	done
	check_all "$NAME" "$PLAIN"
}

# check_direct NAME PLAIN: of the bytes each version's copy wrote, more
# than half went past the page cache (plain: whole 256 KiB chunks; only
# each file's last one is not), none when packed.
check_direct() {
	local name=$1 plain=$2 v line written direct
	for v in "${VERSIONS[@]}"; do
		set -- $v
		line=$(grep "drain: $1/$2 drained (" "$T/$name/ckptd.log" | tail -n 1)
		[ -n "$line" ] || fail "no drained line for $1/$2 in the log"
		written=$(echo "$line" | sed -n 's|.* \([0-9]*\) written, \([0-9]*\) of them direct.*|\1|p')
		direct=$(echo "$line" | sed -n 's|.* \([0-9]*\) written, \([0-9]*\) of them direct.*|\2|p')
		[ -n "$direct" ] || fail "no direct figure in: $line"
		if [ "$plain" = 1 ]; then
			[ "$written" = 0 ] || [ $((direct * 2)) -gt "$written" ] ||
				fail "$1/$2: $direct of $written bytes written direct"
		else
			[ "$direct" = 0 ] || fail "$1/$2 (packed): $direct bytes written direct"
		fi
	done
}

drained_three() { # NAME PLAIN [DRAIN_KEY=VALUE...]
	local name=$1 plain=$2
	shift 2
	rm -rf "$PFS"/*
	drain_conf "$name" threads=3 chunk=256K "$@"
	start_ckptd "$name"
	# Written with the drain paused, so that the three copies run at once.
	ctl "$name" drain --pause >/dev/null || fail "drain --pause failed"
	NAME=$name write_all
	ctl "$name" drain --resume >/dev/null || fail "drain --resume failed"
	check_all "$name" "$plain"
	check_direct "$name" "$plain"
	NAME=$name PLAIN=$plain check_pfs
	check_sanitizers "$name"
	stop_ckptd "$name"
}

# published JOB VERSION N: at least N of the version's files are in place
# on the PFS.
published() {
	local d
	d="$(pfs_vdir "$1" "$2")/files"
	[ -d "$d" ] && [ "$(find "$d" -type f | wc -l)" -ge "$3" ]
}

crash() {
	local name=c job=pc total written
	rm -rf "$PFS"/*
	# 6 files of 3 MB at 2 MiB/s: about 9 s of copying, files published
	# one at a time (a capped drain batches a second's worth).
	drain_conf "$name" threads=3 chunk=256K bandwidth=2M
	start_ckptd "$name"
	tw "$name" write "$job" v1 -S 31 -n 6 -z 3000001 -R -H -w local ||
		fail "$job/v1 was not written"
	poll_until 60 published "$job" v1 1 || fail "no file of $job/v1 published"
	level_is "$name" "$job" v1 drained && fail "$job/v1 drained before the kill"
	kill9 "$name"
	published "$job" v1 6 && fail "every file of $job/v1 was published at the kill"
	sed -i '/^bandwidth/d' "$T/$name/ckptd.conf"
	start_ckptd "$name"
	VERSIONS=("$job v1 31 6 3000001")
	check_version "$name" "$job" v1 31 6 3000001 1
	# The restarted copy skipped the files its journal had.
	total=$((6 * 3000001))
	written=$(sed -n "s|.*drain: $job/v1 drained ([0-9]* bytes, \([0-9]*\) written.*|\1|p" \
		"$T/$name/ckptd.log" | tail -n 1)
	[ -n "$written" ] || fail "no drained line for $job/v1 in the log"
	[ "$written" -lt "$total" ] ||
		fail "the restarted copy wrote $written bytes, the whole version is $total"
	info "the restarted copy wrote $written of $total bytes"
	stop_ckptd "$name"; start_ckptd "$name"
	stop_ckptd "$name"; start_ckptd "$name"
	check_all "$name" 1
	NAME=$name PLAIN=1 check_pfs
	check_sanitizers "$name"
	stop_ckptd "$name"
}

fds() {
	local name=f job=pf
	rm -rf "$PFS"/*
	drain_conf "$name" threads=2 chunk=256K
	start_ckptd "$name"
	ctl "$name" drain --pause >/dev/null || fail "drain --pause failed"
	tw "$name" write "$job" v1 -S 41 -n 1500 -z 5000 -w local ||
		fail "$job/v1 was not written"
	prlimit --pid "${CKPTD_PID[$name]}" --nofile=600:600 ||
		fail "prlimit failed"
	ctl "$name" drain --resume >/dev/null || fail "drain --resume failed"
	VERSIONS=("$job v1 41 1500 5000")
	poll_until 120 level_is "$name" "$job" v1 drained ||
		fail "$job/v1 not drained under 600 fds: $(grep 'drain: ' "$T/$name/ckptd.log" | tail -n 2)"
	rm -rf "$T/exp-fds"
	"$TW" expect "$job" v1 -S 41 -n 1500 -z 5000 -o "$T/exp-fds" ||
		fail "ckpt_tw expect failed"
	diff -r "$T/exp-fds" "$(pfs_vdir "$job" v1)/files" ||
		fail "the PFS files of $job/v1 are not the trainer's"
	check_sanitizers "$name"
	stop_ckptd "$name"
}

subtest plain drained_three a 1
subtest packed drained_three b 0 compress=zstd:1 shuffle=4 incremental=yes
subtest fds fds
subtest crash crash
finish
