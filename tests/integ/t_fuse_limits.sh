#!/bin/bash
# t_fuse_limits: ckptfs at the edges.
#  capacity, tmpfs: the burst buffer full (capacity = 48M; or the store on a
#      96 MiB tmpfs).  A version that fits is committed first; then dd of a
#      version that does not fit gets "No space left on device" (at write,
#      fsync or close), that version cannot be committed, the mount and
#      ckptd stay up, the first version still reads back byte for byte, and
#      a new version that fits is written afterwards.
#  uid: a second uid (nobody, through setpriv) cannot read, write, list,
#      create in, unlink from, or commit root's job through the mount
#      (EACCES, "Permission denied"), but makes its own job, which ckptd
#      records as its own; root's job is untouched.
#  statfs: stat -f and df report the configured capacity, and the free space
#      drops as a version is written.
# TIMEOUT: 180
set -u
. "$(dirname "$0")/lib.sh"
need_fuse

JOB=lim
MIB=$((1 << 20))

sealed() {
	[ "$(ctl "$1" ls "$2" 2>/dev/null | awk -v v="$3" '$1 == v { print $2 }')" = sealed ]
}

# commit NAME MNT VER: mv VER.tmp VER, and wait until ckptd sealed it.
commit() {
	mv "$2/$JOB/$3.tmp" "$2/$JOB/$3" || fail "mv $3.tmp $3 (commit) failed"
	poll_until 30 sealed "$1" "$JOB" "$3" || fail "$3 is not sealed after the rename"
}

# ---- ENOSPC -----------------------------------------------------------------

# full_case NAME BIGMIB: v1 (8 MiB) fits; a BIGMIB file does not.
full_case() {
	local d=$1 big=$2 M=$T/mnt err st
	start_ckptd "$d"
	mount_ckptfs "$d" "$M"
	dd if=/dev/urandom of="$T/v1.bin" bs=1M count=8 status=none
	dd if=/dev/urandom of="$T/v3.bin" bs=1M count=6 status=none
	mkdir -p "$M/$JOB/v1.tmp" || fail "mkdir v1.tmp"
	dd if="$T/v1.bin" of="$M/$JOB/v1.tmp/model.bin" bs=1M conv=fsync status=none ||
		fail "v1 (8 MiB) does not fit"
	commit "$d" "$M" v1
	cmp "$T/v1.bin" "$M/$JOB/v1/model.bin" || fail "v1 reads back wrong"

	mkdir "$M/$JOB/v2.tmp" || fail "mkdir v2.tmp"
	timeout "$(scaled 60)" dd if=/dev/zero of="$M/$JOB/v2.tmp/huge.bin" bs=1M count="$big" \
		conv=fsync status=none 2>"$T/dd.err"
	st=$?
	[ "$st" = 124 ] && fail "dd of $big MiB into a full burst buffer hung (killed after $(scaled 60) s)"
	[ "$st" != 0 ] || fail "dd of $big MiB into a $d-limited burst buffer succeeded"
	grep -q "No space left on device" "$T/dd.err" ||
		fail "dd failed without a clear ENOSPC: $(cat "$T/dd.err")"
	info "[$d] dd: $(tr '\n' ' ' <"$T/dd.err")"
	assert_mounted "$M"
	assert_up "$d"
	err=$(mv "$M/$JOB/v2.tmp" "$M/$JOB/v2" 2>&1) &&
		fail "the version that hit ENOSPC was committed by mv"
	[ "$(vstate "$d" "$JOB" v2)" != sealed ] || fail "the version that hit ENOSPC is sealed"
	cmp "$T/v1.bin" "$M/$JOB/v1/model.bin" || fail "v1 reads back wrong after ENOSPC"
	ctl "$d" verify "$JOB" v1 >/dev/null || fail "ckptctl verify of v1 failed after ENOSPC"
	ls "$M/$JOB" >/dev/null || fail "listing the job failed after ENOSPC"

	# The failed version's space comes back; a version that fits is written.
	mkdir "$M/$JOB/v3.tmp" || fail "mkdir v3.tmp after ENOSPC"
	dd if="$T/v3.bin" of="$M/$JOB/v3.tmp/model.bin" bs=1M conv=fsync status=none 2>"$T/dd.err" ||
		fail "v3 (6 MiB) after ENOSPC: $(cat "$T/dd.err")"
	commit "$d" "$M" v3
	cmp "$T/v3.bin" "$M/$JOB/v3/model.bin" || fail "v3 reads back wrong"
	cmp "$T/v1.bin" "$M/$JOB/v1/model.bin" || fail "v1 reads back wrong at the end"
	umount_ckptfs "$M"
	stop_ckptd "$d"
	info "[$d] ENOSPC reached the writer; mount and ckptd up; v1 intact; v3 written after"
}

capacity_case() {
	ckptd_conf cap capacity=48M segment=8M chunk=1M keep=100
	full_case cap 64
}

tmpfs_case() {
	mount_tmpfs "$T/tmpfs" 96m
	ckptd_conf tmpfs store="$T/tmpfs/store" segment=8M chunk=1M capacity=0 keep=100
	full_case tmpfs 128
}

# ---- a second uid -------------------------------------------------------------

as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }

uid_case() {
	local M=$T/mnt N=65534 out
	command -v setpriv >/dev/null || { info "[uid] skipped: setpriv is not installed"; exit 77; }
	as_nobody true 2>/dev/null || { info "[uid] skipped: setpriv cannot switch to uid $N"; exit 77; }
	chmod 755 "$T"
	ckptd_conf u keep=100
	start_ckptd u
	mount_ckptfs u "$M"
	chmod 755 "$M" 2>/dev/null
	as_nobody test -x "$M" || fail "uid $N cannot reach the mount point $M at all"

	# root's job: a committed version and an open one.
	mkdir -p "$M/rootjob/v1.tmp/sub" || fail "mkdir rootjob/v1.tmp"
	printf 'root secret' >"$M/rootjob/v1.tmp/sub/f" || fail "writing rootjob"
	mv "$M/rootjob/v1.tmp" "$M/rootjob/v1" || fail "committing rootjob/v1"
	poll_until 30 sealed u rootjob v1 || fail "rootjob/v1 not sealed"
	mkdir "$M/rootjob/v2" || fail "mkdir rootjob/v2"
	printf 'open secret' >"$M/rootjob/v2/g" || fail "writing rootjob/v2"

	local R=$M/rootjob
	check_errno EACCES -u $N read "$R/v1/sub/f"
	check_errno EACCES -u $N list "$R"
	check_errno EACCES -u $N list "$R/v1"
	check_errno EACCES -u $N read "$R/v2/g"
	check_errno EACCES -u $N write "$R/v2/g"
	check_errno EACCES -u $N append "$R/v2/g"
	check_errno EACCES -u $N create "$R/v2/new"
	check_errno EACCES -u $N unlink "$R/v2/g"
	check_errno EACCES -u $N truncate "$R/v2/g" 0
	check_errno EACCES -u $N mkdir "$R/v3"
	check_errno EACCES -u $N mkdir "$R/v2/newdir"
	check_errno EACCES -u $N create "$R/v2/.commit"
	check_errno EACCES -u $N rename "$R/v2" "$R/v2x"
	out=$(as_nobody cat "$R/v1/sub/f" 2>&1)
	case $out in
	*"Permission denied"*) ;;
	*) CHECKFAILS+=("cat of root's file as uid $N: '$out', want Permission denied") ;;
	esac
	out=$(as_nobody ls "$R" 2>&1)
	case $out in
	*"Permission denied"*) ;;
	*) CHECKFAILS+=("ls of root's job as uid $N: '$(echo $out)', want Permission denied") ;;
	esac
	[ "$(cat "$R/v1/sub/f")" = "root secret" ] && [ "$(cat "$R/v2/g")" = "open secret" ] ||
		fail "root's files changed"
	[ "$(vstate u rootjob v2)" = open ] || fail "rootjob/v2 is '$(vstate u rootjob v2)', want open"
	[ ${#CHECKFAILS[@]} = 0 ] &&
		info "[uid] uid $N: read, list, write, append, create, unlink, truncate, mkdir, .commit, rename of root's job: EACCES"

	# nobody's own job.
	as_nobody mkdir -p "$M/nobodyjob/n1.tmp/d" || fail "uid $N cannot mkdir its own job"
	as_nobody sh -c "printf 'mine' >'$M/nobodyjob/n1.tmp/d/f'" || fail "uid $N cannot write its own job"
	as_nobody mv "$M/nobodyjob/n1.tmp" "$M/nobodyjob/n1" || fail "uid $N cannot commit its own version"
	poll_until 30 sealed u nobodyjob n1 || fail "nobodyjob/n1 not sealed"
	[ "$(as_nobody cat "$M/nobodyjob/n1/d/f")" = mine ] || fail "uid $N cannot read its own file back"
	out=$(fsop stat "$M/nobodyjob/n1/d/f")
	[ "$(echo "$out" | awk '{ print $4 }')" = $N ] || fail "nobody's file is owned by '$out', want uid $N"
	out=$(fsop stat "$M/nobodyjob")
	[ "$(echo "$out" | awk '{ print $4 }')" = $N ] || fail "nobody's job directory: '$out', want uid $N"
	out=$(ctl u --json ls nobodyjob | /usr/bin/python3 -c \
		'import json,sys; print(json.load(sys.stdin)["versions"][0]["uid"])') ||
		fail "ckptctl --json ls nobodyjob failed"
	[ "$out" = $N ] || fail "ckptd records nobodyjob as uid $out's, want $N"
	out=$(fsop stat "$R/v1/sub/f")
	[ "$(echo "$out" | awk '{ print $4 }')" = 0 ] || fail "root's file is owned by '$out'"
	info "[uid] uid $N made, committed and read its own job (owned by uid $N in ckptd)"
	checks_done "uid $N reached root's job"
	umount_ckptfs "$M"
	stop_ckptd u
}

# ---- statfs -----------------------------------------------------------------

# free_bytes MNT: the free bytes stat -f reports (blocks free x block size).
free_bytes() { stat -f -c '%f %S' "$1" | awk '{ print $1 * $2 }'; }

dropped() { [ "$(free_bytes "$1")" -le "$2" ]; }

statfs_case() {
	local M=$T/mnt cap=$((48 * MIB)) bs blocks total dftotal free0 diff out
	ckptd_conf s capacity=48M segment=8M chunk=1M keep=100
	start_ckptd s
	mount_ckptfs s "$M"
	out=$(stat -f -c '%S %b' "$M") || fail "stat -f of the mount failed"
	read -r bs blocks <<<"$out"
	total=$((bs * blocks))
	diff=$((total - cap))
	[ "${diff#-}" -lt "$bs" ] && [ "${diff#-}" -lt "$MIB" ] ||
		fail "stat -f: $blocks blocks of $bs = $total bytes, want the capacity $cap"
	dftotal=$(df -B1 --output=size "$M" | tail -1 | tr -d ' ')
	[ "$dftotal" = "$total" ] || fail "df says $dftotal bytes, stat -f $total"
	free0=$(free_bytes "$M")
	[ "$free0" -le "$total" ] && [ "$free0" -gt $((total - 16 * MIB)) ] ||
		fail "an empty store reports $free0 bytes free of $total"
	mkdir -p "$M/$JOB/v1.tmp" || fail "mkdir"
	dd if=/dev/urandom of="$M/$JOB/v1.tmp/f" bs=1M count=16 conv=fsync status=none ||
		fail "writing 16 MiB"
	commit s "$M" v1
	poll_until 10 dropped "$M" $((free0 - 16 * MIB)) ||
		fail "free space did not drop by 16 MiB: $free0 before, $(free_bytes "$M") after"
	info "[statfs] stat -f and df: $total bytes total (capacity 48M); free $free0 -> $(free_bytes "$M") after 16 MiB"
	umount_ckptfs "$M"
	stop_ckptd s
}

subtest capacity capacity_case
if mkdir -p "$T/probe" && mount -t tmpfs -o size=1m ckpt-probe "$T/probe" 2>/dev/null; then
	umount "$T/probe"
	subtest tmpfs tmpfs_case
else
	info "tmpfs part skipped: mounting a tmpfs is not permitted here"
fi
subtest uid uid_case
subtest statfs statfs_case
finish
