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
#               side by side.  Each part of the suite (chmod, chown, ...)
#               runs in a fresh open version.  Logs are copied to
#               $CKPT_ACCEPT_LOGS (default /tmp).
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

# pjd_counts LOG: "FAILED TOTAL" subtests of a prove log.
pjd_counts() {
	awk '/^Files=/ { for (i = 1; i <= NF; i++) if ($i ~ /^Tests=/) { sub("Tests=", "", $i); sub(",", "", $i); t += $i } }
	     /Failed [0-9]+\/[0-9]+ subtests/ { split($2, a, "/"); f += a[1] }
	     END { print f + 0, t + 0 }' "$1"
}

# pjd_run PJD MKDIR LOG: run each directory of the suite (chmod, chown, ...)
# in a directory of its own that `MKDIR NAME` makes and prints (in ckptfs a
# fresh open version each, so that one part cannot spoil the next: a
# version is failed, by design, when a writer exits non-zero with a file
# open); print "FAILED TOTAL" (subtests).
pjd_run() {
	local t dir f=0 n=0 a b
	: >"$3"
	for t in "$1"/tests/*/; do
		t=$(basename "$t")
		dir=$($2 "$t") || { echo "cannot make a directory for $t" >>"$3"; continue; }
		(cd "$dir" && timeout 1800 prove -r "$1/tests/$t" >"$3.$t" 2>&1)
		read -r a b <<<"$(pjd_counts "$3.$t")"
		f=$((f + a)) n=$((n + b))
		cat "$3.$t" >>"$3"
	done
	echo "$f $n"
}

# The directory for part NAME: a fresh open version of the ckptfs mount,
# or a fresh directory below the passthrough mount.
ckptfs_dir() { mkdir -p "$M/accept/$1.tmp" && echo "$M/accept/$1.tmp"; }
pt_dir() { mkdir -p "$T/ptmnt$T/ptdir/$1" && echo "$T/ptmnt$T/ptdir/$1"; }

# passthrough SRC OUT: libfuse's example/passthrough built against the
# installed libfuse3; from a git checkout, the example of the installed
# release (fuse-X.Y.Z) when the newest does not build.
passthrough() {
	local v
	cc -O2 -o "$2" "$1/example/passthrough.c" $(pkg-config --cflags --libs fuse3) \
		2>"$T/pt-build.log" && return 0
	v=fuse-$(pkg-config --modversion fuse3)
	git -C "$1" show "$v:example/passthrough.c" >"$T/passthrough.c" 2>/dev/null &&
		git -C "$1" show "$v:example/passthrough_helpers.h" >"$T/passthrough_helpers.h" 2>/dev/null &&
		cc -O2 -o "$2" "$T/passthrough.c" $(pkg-config --cflags --libs fuse3) \
			2>"$T/pt-build.log"
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
	read -r cf ct <<<"$(pjd_run "$T/pjd" ckptfs_dir "$T/pjd-ckptfs.log")"
	assert_up d
	assert_mounted "$M"
	cp "$T/pjd-ckptfs.log" "${CKPT_ACCEPT_LOGS:-/tmp}/pjdfstest-ckptfs.log" 2>/dev/null
	LF=$(src libfuse LIBFUSE_SRC https://github.com/libfuse/libfuse)
	pf=- pt=-
	if [ -z "$LF" ]; then
		say "libfuse sources not found: no passthrough comparison"
	elif passthrough "$LF" "$T/passthrough"; then
		mkdir -p "$T/ptmnt" "$T/ptdir"
		"$T/passthrough" -o allow_other,default_permissions "$T/ptmnt" -f &
		ptpid=$!
		poll_until 10 mountpoint -q "$T/ptmnt" || fail "passthrough did not mount"
		read -r pf pt <<<"$(pjd_run "$T/pjd" pt_dir "$T/pjd-pt.log")"
		cp "$T/pjd-pt.log" "${CKPT_ACCEPT_LOGS:-/tmp}/pjdfstest-passthrough.log" 2>/dev/null
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
