#!/bin/bash
# tests/acceptance/run.sh - third-party file-system suites against ckptfs
# (make acceptance).  Not part of `make test`: slow, and it needs sources
# from outside the tree.  Each part skips with a clear line when what it
# needs cannot be found, and the script checks after each part that ckptd
# is still alive.
#
# Sources, in order: $PJDFSTEST_SRC / $LIBFUSE_SRC (a checkout), then
# $CKPT_ACCEPT_CACHE/<name> (default ~/.cache/ckpt-acceptance), then a
# `git clone` from GitHub (skipped when the network is not reachable).
#
#   pjdfstest   (github.com/pjd/pjdfstest) built from pjdfstest.c with a
#               config.h for Linux, run with prove in an open version of a
#               ckptfs mount, and in libfuse's example/passthrough
#               (github.com/libfuse/libfuse, built against the installed
#               libfuse3) over a local directory: failed/total of each,
#               side by side.
#
# Run as root (pjdfstest changes owners); exit 0 when every part ran or
# skipped, 1 when the daemon died or a part could not run.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
export CKPT_BUILD=${CKPT_BUILD:-build}
CACHE=${CKPT_ACCEPT_CACHE:-$HOME/.cache/ckpt-acceptance}
TEST=acceptance
. "$ROOT/tests/integ/lib.sh"
need_fuse

say() { echo "acceptance: $*"; }

# src NAME ENVVAR URL: print a directory holding NAME's sources, or nothing.
src() {
	local name=$1 var=$2 url=$3 dir
	dir=${!var:-}
	if [ -n "$dir" ] && [ -d "$dir" ]; then echo "$dir"; return; fi
	if [ -d "$CACHE/$name" ]; then echo "$CACHE/$name"; return; fi
	mkdir -p "$CACHE" 2>/dev/null || return
	if timeout 60 git clone -q --depth 1 "$url" "$CACHE/$name" 2>/dev/null; then
		echo "$CACHE/$name"
	fi
}

# pjd_build SRC OUT: pjdfstest in OUT (a copy of SRC's tests and a binary).
pjd_build() {
	mkdir -p "$2" && cp -r "$1/tests" "$2/" || return 1
	cat >"$2/config.h" <<'H'
#define HAVE_SYS_SYSMACROS_H 1
#define HAVE_FACCESSAT 1
#define HAVE_FCHMODAT 1
#define HAVE_FCHOWNAT 1
#define HAVE_FSTATAT 1
#define HAVE_LINKAT 1
#define HAVE_MKDIRAT 1
#define HAVE_MKFIFOAT 1
#define HAVE_MKNODAT 1
#define HAVE_OPENAT 1
#define HAVE_POSIX_FALLOCATE 1
#define HAVE_READLINKAT 1
#define HAVE_RENAMEAT 1
#define HAVE_SYMLINKAT 1
#define HAVE_UNLINKAT 1
#define HAVE_UTIMENSAT 1
#define HAVE_STRUCT_STAT_ST_ATIM 1
#define HAVE_STRUCT_STAT_ST_CTIM 1
#define HAVE_STRUCT_STAT_ST_MTIM 1
H
	cc -O2 -D_GNU_SOURCE -I"$2" -o "$2/pjdfstest" "$1/pjdfstest.c" 2>"$2/build.log"
}

# pjd_run PJD DIR LOG: run the suite with DIR as the file system under test;
# print "FAILED TOTAL" (subtests).
pjd_run() {
	(cd "$2" && timeout 3600 prove -r "$1/tests" >"$3" 2>&1)
	awk '/^Files=/ { for (i = 1; i <= NF; i++) if ($i ~ /^Tests=/) { sub("Tests=", "", $i); sub(",", "", $i); t = $i } }
	     /Failed [0-9]+\/[0-9]+ subtests/ { split($2, a, "/"); f += a[1] }
	     END { print f + 0, t + 0 }' "$3"
}

M=$T/mnt
PFS=$T/pfs
drain_conf d -- keep=100
start_ckptd d
mount_ckptfs d "$M"
rc=0

PJD=$(src pjdfstest PJDFSTEST_SRC https://github.com/pjd/pjdfstest)
if [ -z "$PJD" ]; then
	say "SKIP pjdfstest: no sources (set PJDFSTEST_SRC, or allow git clone of github.com/pjd/pjdfstest)"
elif ! pjd_build "$PJD" "$T/pjd"; then
	say "SKIP pjdfstest: it does not build: $(tail -3 "$T/pjd/build.log")"
else
	mkdir -p "$M/accept/pjd.tmp" || fail "mkdir in the mount failed"
	read -r cf ct <<<"$(pjd_run "$T/pjd" "$M/accept/pjd.tmp" "$T/pjd-ckptfs.log")"
	assert_up d
	assert_mounted "$M"
	cp "$T/pjd-ckptfs.log" "${CKPT_ACCEPT_LOGS:-/tmp}/pjdfstest-ckptfs.log" 2>/dev/null
	LF=$(src libfuse LIBFUSE_SRC https://github.com/libfuse/libfuse)
	pf=- pt=-
	if [ -z "$LF" ]; then
		say "libfuse sources not found: no passthrough comparison"
	elif cc -O2 -o "$T/passthrough" "$LF/example/passthrough.c" \
		$(pkg-config --cflags --libs fuse3) 2>"$T/pt-build.log"; then
		mkdir -p "$T/ptmnt" "$T/ptdir"
		"$T/passthrough" -o allow_other,default_permissions "$T/ptmnt" -f &
		ptpid=$!
		poll_until 10 mountpoint -q "$T/ptmnt" || fail "passthrough did not mount"
		read -r pf pt <<<"$(pjd_run "$T/pjd" "$T/ptmnt$T/ptdir" "$T/pjd-pt.log")"
		fusermount3 -u "$T/ptmnt"
		wait "$ptpid"
	else
		say "libfuse passthrough does not build here: $(tail -2 "$T/pt-build.log")"
	fi
	say "pjdfstest failed/total subtests:  ckptfs $cf/$ct   libfuse passthrough $pf/$pt"
fi

assert_up d
umount_ckptfs "$M"
stop_ckptd d
exit $rc
