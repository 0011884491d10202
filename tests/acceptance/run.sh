#!/bin/bash
# tests/acceptance/run.sh - third-party file-system suites against ckptfs
# (make acceptance).  Not part of `make test`: slow, and it needs tools and
# sources from outside the tree.  One ckptd (with a drain) and one ckptfs
# mount serve every part; each part runs in fresh open versions of the mount
# ($M/accept/<name>.tmp), is bounded in time and in operations, and skips
# with one `acceptance: SKIP <part>: <why>` line when what it needs cannot
# be found or built.  After each part the script checks that ckptd still
# answers and the mount is still there (a part during which either died
# fails, and both are started again for the next part).  At the end it
# prints a table: part, result (pass / FAIL with the first error / SKIP
# with why), time.
#
# Parts (CKPT_ACCEPT_PARTS="fsx fsstress" runs only those; a word selects
# the part of that name and the parts NAME-*, e.g. "fsx" all fsx modes,
# "tar-rsync" both tree parts; default: all):
#
#   fsx-default fsx-large fsx-reopen fsx-uring fsx-aio
#               xfstests' ltp/fsx.c, mapped reads and writes on, on one file
#               in an open version: default ops (100000), a 2.25 GiB file
#               with ops up to 4 MiB, close/reopen + drop_caches + msync
#               invalidate + fsync with page-aligned reads, writes and
#               truncates (-c 8 -f -y -r/-w/-t 4096), io_uring (-U: fsx
#               built with liburing) and AIO (-A: built with libaio,
#               Debian libaio-dev).  Then the version is committed and the
#               file must read back the same.
#   fsstress    xfstests' ltp/fsstress.c, 4 processes x 10000 ops (it
#               needs <xfs/xfs.h>, Debian xfslibs-dev); the version is then
#               committed and must show the same tree with the same bytes.
#   stress-ng   stress-ng's filesystem class (stress-ng --class
#               filesystem?) and file-backed mmap, sendfile, readahead and
#               seek, one after another, each in its own version with
#               --verify, 2 instances, at most 5000 ops or 5 s, files of at
#               most 64 MiB (Debian stress-ng).  A stressor that reports
#               "fail:" or exits with a failure fails the part; one
#               stress-ng skips (not supported here) is named, and so are
#               those of the class that never touch the mount (SNG_SKIP,
#               with why).  A file ckptfs marked cut short because
#               stress-ng killed a helper with it open is named too: that
#               is the documented rule, and the stressor must still pass.
#   dbench      dbench, 4 clients, 30 s (Debian dbench).
#   bonnie++    bonnie++ -s 128 -r 64 -n 8 (Debian bonnie++).
#   tar-rsync   a tree with modes (setuid too), owners, times with
#               nanoseconds, symlinks (dangling, absolute, to a directory),
#               a FIFO, an empty directory, a sparse file, names with
#               spaces and UTF-8: tar -xp into the mount then `tar --diff`
#               clean, `rsync -a` then `rsync -a -c -i -n` listing nothing;
#               both copied back out of the mount and checked the same way;
#               after the commit the same bytes, links and directories.
#   tar-rsync-hardlinks  the same for a small tree of hard links (tar,
#               rsync -aH), which must be one inode in the mount.
#   pjdfstest   (github.com/pjd/pjdfstest) built from pjdfstest.c with a
#               config.h for Linux, run with prove in an open version of the
#               mount, each of its directories (chmod, chown, ...) in a fresh
#               one, and in libfuse's example/passthrough (built against the
#               installed libfuse3) over a local directory: failed/total of
#               each, side by side.  It fails only if nothing ran.
#
# Sources, in order: $XFSTESTS_SRC / $PJDFSTEST_SRC / $LIBFUSE_SRC (a
# checkout), then $CKPT_ACCEPT_CACHE/<name> (default ~/.cache/ckpt-acceptance),
# then a bare git mirror $CKPT_ACCEPT_MIRROR/<owner>+<name>/repo (default
# /work/.mirror; its HEAD is extracted into the test's temporary directory),
# then a `git clone` from GitHub into the cache (skipped when the network is
# not reachable).  Nothing is built in the tree: the tools are compiled into
# the test's temporary directory.
#
# Logs of every part go to $CKPT_ACCEPT_LOGS (default /tmp/ckpt-acceptance):
# <part>.log, pjdfstest-ckptfs.log, pjdfstest-passthrough.log, and fsx's
# .fsxlog/.fsxops/.fsxgood of a failed fsx run under fsx-<mode>/.
#
# Run as root (pjdfstest changes owners, fsx -c drops caches); exit 0 when
# every part passed or skipped, 1 when one failed.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
export CKPT_BUILD=${CKPT_BUILD:-build}
CACHE=${CKPT_ACCEPT_CACHE:-$HOME/.cache/ckpt-acceptance}
MIRROR=${CKPT_ACCEPT_MIRROR:-/work/.mirror}
LOGS=${CKPT_ACCEPT_LOGS:-/tmp/ckpt-acceptance}
. "$ROOT/tests/integ/lib.sh"
TEST=acceptance
need_fuse

say() { echo "acceptance: $*"; }

ALL_PARTS="fsx-default fsx-large fsx-reopen fsx-uring fsx-aio fsstress stress-ng dbench bonnie++ tar-rsync tar-rsync-hardlinks pjdfstest"
PARTS=${CKPT_ACCEPT_PARTS:-all}

# selected PART: PART is to run ($PARTS names it, or a group NAME of NAME-*).
selected() {
	local w
	[ "$PARTS" = all ] && return 0
	for w in $PARTS; do
		[ "$1" = "$w" ] || [[ $1 == "$w"-* ]] && return 0
	done
	return 1
}
for _w in $PARTS; do
	[ "$_w" = all ] && continue
	_ok=
	for _p in $ALL_PARTS; do
		[ "$_p" = "$_w" ] || [[ $_p == "$_w"-* ]] && _ok=1
	done
	[ -n "$_ok" ] || { say "CKPT_ACCEPT_PARTS: no part '$_w' (parts: $ALL_PARTS)"; exit 2; }
done
mkdir -p "$LOGS" || { say "cannot make $LOGS"; exit 1; }

# ---- sources ------------------------------------------------------------------

# src NAME ENVVAR URL MIRROR [PATH...]: print a directory holding NAME's
# sources, or nothing.  From the mirror, only PATHs (all when none) of HEAD
# are extracted, into $T/src/NAME; its git directory is written to
# $T/src/NAME.git for `git show` of other revisions (gitsrc).
src() {
	local name=$1 var=$2 url=$3 mirror=$MIRROR/$4/repo dir
	shift 4
	dir=${!var:-}
	if [ -n "$dir" ] && [ -d "$dir" ]; then echo "$dir"; return; fi
	if [ -d "$CACHE/$name" ]; then echo "$CACHE/$name"; return; fi
	if git --git-dir="$mirror" rev-parse -q --verify HEAD >/dev/null 2>&1; then
		dir=$T/src/$name
		mkdir -p "$dir" &&
			git --git-dir="$mirror" archive HEAD "$@" | tar -x -C "$dir" &&
			echo "$mirror" >"$dir.git" && { echo "$dir"; return; }
	fi
	mkdir -p "$CACHE" 2>/dev/null || return
	if timeout 60 git clone -q --depth 1 "$url" "$CACHE/$name" 2>/dev/null; then
		echo "$CACHE/$name"
	fi
}

# gitsrc DIR ARGS...: git ARGS in the repository DIR came from.
gitsrc() {
	local d=$1
	shift
	if [ -f "$d.git" ]; then
		git --git-dir="$(cat "$d.git")" "$@"
	else
		git -C "$d" "$@"
	fi
}

# has_header H [CFLAGS...]: the C compiler finds <H>.
has_header() {
	local h=$1
	shift
	printf '#include <%s>\n' "$h" | cc -E -x c "$@" - >/dev/null 2>&1
}

# ---- the ckptfs side ----------------------------------------------------------

M=$T/mnt
PFS=$T/pfs

# The directory for part NAME: a fresh open version of the ckptfs mount,
# or a fresh directory below the passthrough mount.
ckptfs_dir() { mkdir -p "$M/accept/$1.tmp" && echo "$M/accept/$1.tmp"; }
pt_dir() { mkdir -p "$T/ptmnt$T/ptdir/$1" && echo "$T/ptmnt$T/ptdir/$1"; }

sealed() {
	[ "$(ctl d ls accept 2>/dev/null | awk -v v="$1" '$1 == v { print $2 }')" = sealed ]
}

# commit_version NAME: commit accept/NAME.tmp by renaming it to NAME, wait
# until ckptd sealed it and check it with ckptctl verify.
commit_version() {
	mv "$M/accept/$1.tmp" "$M/accept/$1" || fail "commit of accept/$1 (mv $1.tmp $1) failed"
	poll_until 60 sealed "$1" ||
		fail "accept/$1 is not sealed 60 s after the rename: $(ctl d ls accept 2>&1 | grep "^$1 ")"
	ctl d verify accept "$1" >"$T/verify.out" 2>&1 ||
		fail "ckptctl verify accept $1: $(head -3 "$T/verify.out")"
}

# tree_samples DIR: "PATH SIZE SHA256" of each regular file under DIR
# (but ./.commit), the hash taken over 1 MiB at the start, at the end and
# at 8 offsets between: fsstress makes sparse files of terabytes, which
# cannot be read whole through FUSE in any reasonable time (a file of up to
# 9 MiB is read whole).
SAMPLES_PY='
import hashlib, os, stat, sys
root = os.fsencode(sys.argv[1])
out = []
for d, dirs, files in os.walk(root):
    for f in files:
        p = os.path.join(d, f)
        rel = os.path.relpath(p, root)
        st = os.lstat(p)
        if rel == b".commit" or not stat.S_ISREG(st.st_mode):
            continue
        n, mib, h = st.st_size, 1 << 20, hashlib.sha256()
        with open(p, "rb") as fh:
            for o in sorted({0, max(0, n - mib)} | {n * i // 9 for i in range(1, 9)}):
                fh.seek(o)
                h.update(fh.read(mib))
        out.append(rel + b" %d %s" % (n, h.hexdigest().encode()))
sys.stdout.buffer.write(b"".join(l + b"\n" for l in sorted(out)))
'
tree_samples() { timeout 600 /usr/bin/python3 -c "$SAMPLES_PY" "$1"; }

# same_after_commit NAME: commit accept/NAME.tmp; the committed version
# shows the same tree (types, sizes, names) with the same bytes (sampled:
# tree_samples) as the open one did.  The differences go to
# $LOGS/NAME.commit.diff.
same_after_commit() {
	local d=$M/accept/$1 bad=
	tree_shape "$d.tmp" >"$T/$1.shape1" || fail "listing the open version accept/$1.tmp failed"
	tree_samples "$d.tmp" >"$T/$1.sums1" || fail "reading the open version accept/$1.tmp failed"
	commit_version "$1"
	tree_shape -m "$d" >"$T/$1.shape2" || fail "listing the committed version accept/$1 failed"
	tree_samples "$d" >"$T/$1.sums2" || fail "reading the committed version accept/$1 failed"
	: >"$LOGS/$1.commit.diff"
	if ! diff "$T/$1.shape1" "$T/$1.shape2" >>"$LOGS/$1.commit.diff"; then
		bad="the tree differs after the commit ($(grep -c '^<' "$LOGS/$1.commit.diff") entries gone, $(grep -c '^>' "$LOGS/$1.commit.diff") new; first: $(grep -m1 '^[<>]' "$LOGS/$1.commit.diff"))"
	fi
	if ! diff "$T/$1.sums1" "$T/$1.sums2" >"$T/$1.diff"; then
		cat "$T/$1.diff" >>"$LOGS/$1.commit.diff"
		bad="${bad:+$bad; }the bytes differ after the commit: $(grep -m1 '^[<>]' "$T/$1.diff")"
	fi
	[ -z "$bad" ] || fail "$bad (all: $LOGS/$1.commit.diff)"
	rm -f "$LOGS/$1.commit.diff"
	echo "committed: the same $(wc -l <"$T/$1.shape2") entries, $(wc -l <"$T/$1.sums2") files the same bytes"
}

# trun SECONDS CMD...: print the command into the part's log (fd 3), then
# run it under timeout.
trun() {
	local s=$1
	shift
	echo "+ $*" >&3
	timeout -k 10 "$s" "$@"
}

# first_error LOG PATTERN: the first line of LOG matching PATTERN (ERE).
first_error() { grep -m1 -E "$2" "$1" | cut -c1-200; }

# ---- xfstests: fsx and fsstress ------------------------------------------------

FSX='' FSX_WHY='' FSX_URING='' FSX_AIO='' FSSTRESS='' FSSTRESS_WHY=''
xfstests_build() {
	local x out=$T/xfstests flags=() libs=() m
	x=$(src xfstests XFSTESTS_SRC https://github.com/kdave/xfstests kdave+xfstests \
		ltp/fsx.c ltp/fsstress.c src/global.h src/statx.h src/fiexchange.h)
	if [ -z "$x" ] || [ ! -f "$x/ltp/fsx.c" ]; then
		FSX_WHY="no xfstests sources (set XFSTESTS_SRC, or allow git clone of github.com/kdave/xfstests)"
		FSSTRESS_WHY=$FSX_WHY
		return
	fi
	mkdir -p "$out"
	# The few config.h answers ltp/ needs on Linux (autoconf is not run).
	cat >"$out/config.h" <<'H'
#define HAVE_SYS_TYPES_H 1
#define HAVE_SYS_STAT_H 1
#define HAVE_SYS_STATVFS_H 1
#define HAVE_SYS_TIME_H 1
#define HAVE_SYS_IOCTL_H 1
#define HAVE_SYS_WAIT_H 1
#define HAVE_MALLOC_H 1
#define HAVE_DIRENT_H 1
#define HAVE_STDLIB_H 1
#define HAVE_UNISTD_H 1
#define HAVE_ERRNO_H 1
#define HAVE_STRING_H 1
#define HAVE_SYS_FCNTL_H 1
#define HAVE_SYS_PARAM_H 1
#define HAVE_LIBGEN_H 1
#define HAVE_ASSERT_H 1
#define STDC_HEADERS 1
#define HAVE_STRINGS_H 1
#define HAVE_LINUX_FALLOC_H 1
#define HAVE_SYS_MMAN_H 1
#define HAVE_SYS_PRCTL_H 1
#define HAVE_LINUX_FIEMAP_H 1
#define HAVE_ERR_H 1
#define HAVE_COPY_FILE_RANGE 1
#define HAVE_RENAMEAT2 1
#include <getopt.h>
#include <time.h>
H
	if has_header liburing.h; then
		flags+=(-DURING) libs+=(-luring)
	else
		FSX_URING="<liburing.h> is missing (Debian package liburing-dev)"
	fi
	if has_header libaio.h; then
		flags+=(-DAIO) libs+=(-laio)
	else
		FSX_AIO="<libaio.h> is missing (Debian package libaio-dev)"
	fi
	if cc -O2 -D_GNU_SOURCE -I"$out" -I"$x/src" "${flags[@]}" -o "$out/fsx" \
		"$x/ltp/fsx.c" "${libs[@]}" >"$out/fsx-build.log" 2>&1; then
		FSX=$out/fsx
	else
		FSX_WHY="fsx does not build: $(grep -m1 -E 'error' "$out/fsx-build.log")"
	fi
	# fsstress includes <xfs/xfs.h> (its XFS ioctls fail harmlessly elsewhere).
	if ! has_header xfs/xfs.h; then
		FSSTRESS_WHY="<xfs/xfs.h> is missing (Debian package xfslibs-dev)"
	elif cc -O2 -D_GNU_SOURCE -DHAVE_XFS_XFS_H -I"$out" -I"$x/src" -o "$out/fsstress" \
		"$x/ltp/fsstress.c" -lm >"$out/fsstress-build.log" 2>&1; then
		FSSTRESS=$out/fsstress
	else
		FSSTRESS_WHY="fsstress does not build: $(grep -m1 -E 'error' "$out/fsstress-build.log")"
	fi
	m=$(git --git-dir="$(cat "$x.git" 2>/dev/null)" log -1 --format=%h 2>/dev/null ||
		git -C "$x" log -1 --format=%h 2>/dev/null)
	say "xfstests from $x${m:+ (commit $m)}: fsx $([ -n "$FSX" ] && echo built || echo "not built"), fsstress $([ -n "$FSSTRESS" ] && echo built || echo "not built")"
}

# part_fsx MODE OPS FSX-ARGS...: fsx on accept/fsx-MODE.tmp/file (a fresh
# open version) for OPS operations, after a short run on a local file (a
# mode this machine cannot run at all is skipped); then the version is
# committed and the file must read back the same.
part_fsx() {
	local mode=$1 ops=$2 w=$T/fsx-$1 d f rc sum1 sum2 need
	shift 2
	[ -n "$FSX" ] || skip "$FSX_WHY"
	case $mode in
	uring) [ -z "$FSX_URING" ] || skip "fsx is built without io_uring: $FSX_URING" ;;
	aio) [ -z "$FSX_AIO" ] || skip "fsx is built without AIO: $FSX_AIO" ;;
	large)
		# fsx keeps two copies of the largest file in memory.
		need=$(($(awk '/^MemAvailable:/ { print $2 }' /proc/meminfo) * 1024))
		[ "$need" -gt $((5 << 30)) ] || skip "fsx -l 2.25 GiB needs 5 GiB of free memory"
		;;
	esac
	mkdir -p "$w/local" "$w/logs" || fail "mkdir $w"
	trun 120 "$FSX" -q -N 300 -S 1 "$@" -P "$w/local" "$w/local/file" >"$w/local.out" 2>&1 ||
		skip "fsx $* fails on a local file too: $(tail -1 "$w/local.out")"
	d=$(ckptfs_dir "fsx-$mode") || fail "cannot make accept/fsx-$mode.tmp"
	f=$d/file
	# -q: only failures; --record-ops: the ops file to replay a failure.
	trun 600 "$FSX" -q -N "$ops" -S 1 "$@" -P "$w/logs" --record-ops "$f" >"$w/fsx.out" 2>&1
	rc=$?
	cat "$w/fsx.out"
	if [ "$rc" != 0 ] || ! grep -q "All $ops operations completed A-OK" "$w/fsx.out"; then
		mkdir -p "$LOGS/fsx-$mode" && cp "$w/logs"/* "$LOGS/fsx-$mode/" 2>/dev/null
		fail "fsx $* exit $rc: $(first_error "$w/fsx.out" 'BAD|[Ff]ail|rror|short|differ|Size' ||
			tail -1 "$w/fsx.out") (logs: $LOGS/fsx-$mode)"
	fi
	sum1=$(sha256sum <"$f") || fail "reading the file back in the open version failed"
	commit_version "fsx-$mode"
	sum2=$(sha256sum <"$M/accept/fsx-$mode/file") || fail "reading the committed file failed"
	[ "$sum1" = "$sum2" ] || fail "the file differs after the commit"
	echo "$ops ops A-OK; committed, $(stat -c %s "$M/accept/fsx-$mode/file") bytes the same" | tee "$T/note"
}

part_fsstress() {
	local d rc
	[ -n "$FSSTRESS" ] || skip "$FSSTRESS_WHY"
	d=$(ckptfs_dir fsstress) || fail "cannot make accept/fsstress.tmp"
	trun 600 "$FSSTRESS" -d "$d/work" -n 10000 -p 4 -s 42 >"$T/fsstress.out" 2>&1
	rc=$?
	cat "$T/fsstress.out"
	[ "$rc" = 0 ] || fail "fsstress exit $rc: $(tail -1 "$T/fsstress.out")"
	same_after_commit fsstress >"$T/note"
	cat "$T/note"
}

# ---- stress-ng ------------------------------------------------------------------

# LABEL STRESSOR [OPTIONS]: stress-ng's filesystem class (stress-ng
# --class filesystem?) that touches the mount, plus file-backed mmap,
# sendfile, readahead and seek.  Those that need a local file system's
# ioctls (chattr, inode-flags, file-ioctl, verity, fiemap) or name_to_handle_at
# (handle) run too: stress-ng skips them itself where FUSE says no.
SNG_LIST='access access
chattr chattr
chdir chdir
chmod chmod
chown chown
copy-file copy-file
dentry dentry
dir dir
dirdeep dirdeep
dirmany dirmany
dnotify dnotify
dup dup
fallocate fallocate
fcntl fcntl
fiemap fiemap
file-ioctl file-ioctl
filename filename
flock flock
fpunch fpunch
fsize fsize
fstat fstat
handle handle
hdd hdd --hdd-bytes 32M
hdd-rnd hdd --hdd-bytes 16M --hdd-opts wr-rnd,rd-rnd,fsync
inode-flags inode-flags
inotify inotify
io io
iomix iomix --iomix-bytes 32M
lease lease
link link
locka locka
lockf lockf
lockofd lockofd
mknod mknod
mmap-file mmap --mmap-file --mmap-bytes 4M
open open
readahead readahead --readahead-bytes 16M
rename rename
seek seek --seek-size 64M
sendfile sendfile
symlink symlink
sync-file sync-file --sync-file-bytes 16M
touch touch
utime utime
verity verity
xattr xattr'

# STRESSOR WHY: the rest of the class, which never touches the mount (its
# --temp-path): skipped, each with one line.
SNG_SKIP='bind-mount bind-mounts / in a new mount namespace (the temp path is not used)
binderfs mounts a binderfs of its own (the temp path is not used)
eventfd stresses eventfd(2), no file at all
fanotify marks the root and /proc mounts, not the temp path
getdent reads /proc, /sys and /dev (the temp path is not used)
ioprio sets I/O priorities of processes, no file on the mount
procfs reads /proc (the temp path is not used)'

# cut_short LABEL: ckptfs marked a file of accept/stress-ng-LABEL.tmp cut
# short because stress-ng killed a helper of its own (or it exited
# non-zero) with the file open.  That is the documented rule, not a
# failure: the file is marked (user.ckpt.failed) and the version would not
# commit until it is removed, which stress-ng's own cleanup does; the
# stressor must still succeed (no " fail:", exit 0).  Named in the note.
cut_short() {
	tail -c "+${FUSE_LOGOFF[$(_fuse_key "$M")]:-1}" "$T/d/ckptfs.log" |
		grep -qE "version accept/stress-ng-$1: file .* may be cut short: its writer pid [0-9]+ (killed by signal|exited with status)"
}

part_stressng() {
	local label s opts d rc out n npass=0 skipped=() failed=() killed=() first= why
	command -v stress-ng >/dev/null || skip "stress-ng is not installed (Debian package stress-ng)"
	while read -r s why; do
		[ -n "$s" ] || continue
		echo "stress-ng: SKIP $s: $why"
		skipped+=("$s")
	done <<<"$SNG_SKIP"
	while read -r label s opts; do
		[ -n "$label" ] || continue
		d=$(ckptfs_dir "stress-ng-$label") || fail "cannot make accept/stress-ng-$label.tmp"
		out=$T/stress-ng-$label.out
		# shellcheck disable=SC2086
		# chown's instances share a directory: one removes it while
		# another fchowns its open, unlinked file, which ckptfs answers
		# ESTALE (docs/mount.md, Differences from POSIX): one instance.
		n=2
		[ "$s" = chown ] && n=1
		trun 90 stress-ng --"$s" $n --"$s"-ops 5000 $opts --timeout 5s --verify \
			--temp-path "$d" --metrics-brief >"$out" 2>&1
		rc=$?
		cat "$out"
		if ! "$RAW" -s "$(sock d)" ping; then
			fail "ckptd died during stress-ng --$s ($label)"
		fi
		! cut_short "$label" || killed+=("$label")
		if grep -q ' fail: ' "$out" || ! { [ "$rc" = 0 ] || [ "$rc" = 3 ] || [ "$rc" = 4 ]; }; then
			failed+=("$label")
			[ -n "$first" ] || first="$label: exit $rc: $(first_error "$out" ' fail: |rror' || tail -1 "$out")"
		elif [ "$rc" != 0 ] || grep -q 'skipping stressor' "$out"; then
			echo "stress-ng: SKIP $label: stress-ng skipped it: $(first_error "$out" 'skipping|not supported|not implemented' || echo "exit $rc")"
			skipped+=("$label")
		else
			npass=$((npass + 1))
		fi
	done <<<"$SNG_LIST"
	echo "$npass passed${skipped:+; skipped: ${skipped[*]}}${killed:+; a file cut short by design (stress-ng killed a writer with it open): ${killed[*]}}" >"$T/note"
	echo "stress-ng: $(cat "$T/note")${failed:+; FAILED: ${failed[*]}}"
	[ ${#failed[@]} = 0 ] || fail "${#failed[@]} stressors failed (${failed[*]}); first: $first"
	[ "$npass" -gt 0 ] || fail "no stressor ran"
}

# ---- dbench, bonnie++ -------------------------------------------------------------

part_dbench() {
	local d rc
	command -v dbench >/dev/null || skip "dbench is not installed (Debian package dbench)"
	d=$(ckptfs_dir dbench) || fail "cannot make accept/dbench.tmp"
	trun 180 dbench -D "$d" -t 30 4 >"$T/dbench.out" 2>&1
	rc=$?
	cat "$T/dbench.out"
	[ "$rc" = 0 ] || fail "dbench exit $rc: $(first_error "$T/dbench.out" 'ERROR|rror|fail' || tail -1 "$T/dbench.out")"
	# dbench's start barrier is a SysV semaphore (semget(IPC_PRIVATE)):
	# without one (the machine's semaphores used up, seen once right after
	# stress-ng) its clients start unsynchronized; nothing of the mount.
	grep -v 'failed to create barrier semaphore' "$T/dbench.out" >"$T/dbench.chk"
	! grep -qE 'ERROR|[Ff]ailed|unexpected' "$T/dbench.chk" ||
		fail "dbench: $(first_error "$T/dbench.chk" 'ERROR|[Ff]ailed|unexpected')"
	grep -E '^Throughput' "$T/dbench.out" >"$T/note" || fail "dbench printed no throughput"
	grep -q 'failed to create barrier semaphore' "$T/dbench.out" &&
		sed -i 's/$/ (no start barrier: semget failed)/' "$T/note"
	same_after_commit dbench
}

part_bonnie() {
	local d rc
	command -v bonnie++ >/dev/null || skip "bonnie++ is not installed (Debian package bonnie++)"
	d=$(ckptfs_dir bonnie) || fail "cannot make accept/bonnie.tmp"
	trun 900 bonnie++ -d "$d" -u 0:0 -s 128 -r 64 -n 8 -x 1 -q >"$T/bonnie.out" 2>"$T/bonnie.err"
	rc=$?
	cat "$T/bonnie.err"
	bon_csv2txt <"$T/bonnie.out" 2>/dev/null || cat "$T/bonnie.out"
	[ "$rc" = 0 ] || fail "bonnie++ exit $rc: $(tail -1 "$T/bonnie.err")"
	grep -q '^1\.98,' "$T/bonnie.out" || fail "bonnie++ printed no result line"
	# Fields of bonnie++'s CSV (format 1.98): K/s.
	awk -F, '/^1\.98,/ { printf "write %s K/s, rewrite %s K/s, read %s K/s, per-char write %s K/s, read %s K/s\n", $12, $14, $18, $10, $16 }' \
		"$T/bonnie.out" >"$T/note"
	same_after_commit bonnie
}

# ---- tar and rsync round trips -----------------------------------------------------

# mk_tree DIR: the tree to copy: modes (setuid too), an owner that is no
# user, symlinks (relative, dangling, absolute, to a directory), a FIFO, an
# empty directory, an empty and a sparse file, a 3 MiB file, names with
# spaces and UTF-8, and distinct times with nanoseconds on everything.
# mk_tree DIR hardlinks: a small tree of its own for the hard links (so
# that their part fails for them alone): a file with three names in three
# directories, another with two in one, and a plain file.
mk_tree() {
	local r=$1
	if [ "${2:-}" = hardlinks ]; then
		mkdir -p "$r/a b" "$r/ü ñ 日本" || return 1
		echo linked >"$r/h1"
		ln "$r/h1" "$r/a b/h2" && ln "$r/h1" "$r/ü ñ 日本/h3" || return 1
		head -c 1500000 /dev/urandom >"$r/a b/big one" && chmod 0640 "$r/a b/big one"
		ln "$r/a b/big one" "$r/a b/big two" || return 1
		echo plain >"$r/plain"
		set_times "$r"
		return
	fi
	mkdir -p "$r/a b" "$r/ü ñ 日本/deep/er" "$r/empty" "$r/priv" || return 1
	printf 'hello, world\n' >"$r/a b/c d.txt"
	head -c 3145728 /dev/urandom >"$r/ü ñ 日本/データ.bin"
	printf '#!/bin/sh\necho hi\n' >"$r/exec.sh"
	echo secret >"$r/priv/secret"
	: >"$r/empty file"
	echo x >"$r/ü ñ 日本/deep/er/x y z"
	echo suid >"$r/setuid"
	truncate -s 20M "$r/sparse" && echo tail >>"$r/sparse"
	echo owned >"$r/a b/owned by 1234"
	chown 1234:5678 "$r/a b/owned by 1234"
	chmod 0644 "$r/a b/c d.txt"
	chmod 0600 "$r/ü ñ 日本/データ.bin"
	chmod 0755 "$r/exec.sh"
	chmod 0400 "$r/priv/secret"
	chmod 4755 "$r/setuid"
	chmod 0640 "$r/sparse"
	chmod 0700 "$r/priv"
	chmod 0750 "$r/empty"
	chmod 0711 "$r/ü ñ 日本/deep"
	ln -s "c d.txt" "$r/a b/link to c d"
	ln -s /nonexistent/abs "$r/abs link"
	ln -s "no such file" "$r/dangling"
	ln -s "ü ñ 日本/deep" "$r/dir link"
	mkfifo -m 0640 "$r/a b/fifo"
	set_times "$r"
}

# set_times DIR: distinct times with nanoseconds on everything below DIR,
# deepest first (a directory after what it holds).
set_times() {
	local i=0 p
	while IFS= read -r -d '' p; do
		i=$((i + 1))
		touch -h -d "@$((1000000000 + i * 86413)).$(printf %09d $((i * 123456789 % 1000000000)))" "$p" ||
			return 1
	done < <(find "$1" -mindepth 1 -depth -print0)
}

# check_ok WHAT CMD...: run CMD (its output in $T/out); a non-zero status
# is a failed check (recorded, the part goes on).  nothing_listed WHAT: and
# $T/out must be empty.
TREE_FAILS=()
check_ok() {
	local what=$1
	shift
	echo "+ $*" >&3
	timeout -k 10 120 "$@" >"$T/out" 2>&1 && return 0
	TREE_FAILS+=("$what: exit $?: $(head -3 "$T/out" | tr '\n' '|')")
	echo "CHECK FAILED: ${TREE_FAILS[-1]}"
	cat "$T/out"
	return 1
}
nothing_listed() {
	[ -s "$T/out" ] || return 0
	TREE_FAILS+=("$1: $(head -4 "$T/out" | tr '\n' '|')")
	echo "CHECK FAILED: ${TREE_FAILS[-1]}"
	cat "$T/out"
}

# part_tree NAME [hardlinks]: tar and rsync round trips of mk_tree's tree
# through versions NAME-tar and NAME-rsync of the mount: tar -xp into the
# mount and tar --diff there, tarred back out and --diff; rsync -a into the
# mount and rsync -a -c -i -n, rsync'ed back out and -c -i -n again (with
# hard links: -H, and the links one inode in the mount); committed, the
# bytes, symlinks, specials and directories are the same (rsync -rlcD: no
# modes, which lose their write bits, nor times).  Every check runs; the
# part fails with the first that failed.
part_tree() {
	local name=$1 h=${2:-} src=$T/$1-src d r o=() oh v
	command -v rsync >/dev/null || skip "rsync is not installed (Debian package rsync)"
	[ -z "$h" ] || o=(-H)
	oh=${o[*]:+ ${o[*]}}
	mk_tree "$src" "$h" || fail "making the tree on local disk failed"
	tar -C "$src" --format=posix -cpf "$T/$name.tar" . || fail "tar -c of the local tree failed"
	d=$(ckptfs_dir "$name-tar") || fail "cannot make accept/$name-tar.tmp"
	check_ok "tar -xp into the mount" tar -C "$d" -xpf "$T/$name.tar"
	check_ok "tar --diff in the mount" tar -C "$d" --diff -f "$T/$name.tar"
	nothing_listed "tar --diff in the mount lists"
	if [ -n "$h" ]; then
		# One file, three names: one inode with 3 links in the mount.
		stat -c 'inode %i links %h' "$d/h1" "$d/a b/h2" "$d/ü ñ 日本/h3" >"$T/out" 2>&1
		[ "$(sort -u "$T/out")" = "inode $(stat -c %i "$d/h1" 2>/dev/null) links 3" ] || {
			TREE_FAILS+=("h1, a b/h2, ü ñ 日本/h3 are not one inode with 3 links in the mount: $(tr '\n' '|' <"$T/out")")
			echo "CHECK FAILED: ${TREE_FAILS[-1]}"
		}
	fi
	check_ok "tar -c out of the mount" tar -C "$d" --format=posix -cpf "$T/$name-back.tar" .
	mkdir -p "$T/$name-back-tar"
	check_ok "tar -xp of the tar made from the mount" tar -C "$T/$name-back-tar" -xpf "$T/$name-back.tar"
	check_ok "tar --diff of the tree tarred back out" tar -C "$T/$name-back-tar" --diff -f "$T/$name.tar"
	nothing_listed "tar --diff of the tree tarred back out of the mount lists"
	r=$(ckptfs_dir "$name-rsync") || fail "cannot make accept/$name-rsync.tmp"
	check_ok "rsync -a$oh into the mount" rsync -a "${o[@]}" "$src/" "$r/"
	check_ok "rsync -a$oh -c -i -n against the mount" rsync -a "${o[@]}" -c -i -n "$src/" "$r/"
	nothing_listed "rsync -a$oh -c -i -n after rsync -a$oh into the mount lists"
	check_ok "rsync -a$oh out of the mount" rsync -a "${o[@]}" "$r/" "$T/$name-back-rsync/"
	check_ok "rsync -a$oh -c -i -n of the copy back" rsync -a "${o[@]}" -c -i -n "$src/" "$T/$name-back-rsync/"
	nothing_listed "rsync -a$oh -c -i -n of the tree copied back out of the mount lists"
	commit_version "$name-tar"
	commit_version "$name-rsync"
	for v in "$name-tar" "$name-rsync"; do
		check_ok "rsync -rlcD$oh -i -n against the committed accept/$v" \
			rsync -rlcD "${o[@]}" -i -n "$src/" "$M/accept/$v/"
		nothing_listed "rsync -rlcD$oh -i -n against the committed accept/$v lists"
	done
	[ ${#TREE_FAILS[@]} = 0 ] ||
		fail "${#TREE_FAILS[@]} checks failed; the first: ${TREE_FAILS[0]}"
	echo "tar --diff and rsync -c -i -n clean (in the mount, copied back out, committed)" | tee "$T/note"
}

# ---- pjdfstest -------------------------------------------------------------------

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
# file whose writer exits non-zero with it open is marked cut short, by
# design, and its version does not commit); print "FAILED TOTAL" (subtests).
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

# passthrough SRC OUT: libfuse's example/passthrough built against the
# installed libfuse3; from a git checkout or mirror, the example of the
# installed release (fuse-X.Y.Z) when the newest does not build.
passthrough() {
	local v
	cc -O2 -o "$2" "$1/example/passthrough.c" $(pkg-config --cflags --libs fuse3) \
		2>"$T/pt-build.log" && return 0
	v=fuse-$(pkg-config --modversion fuse3)
	gitsrc "$1" show "$v:example/passthrough.c" >"$T/passthrough.c" 2>/dev/null &&
		gitsrc "$1" show "$v:example/passthrough_helpers.h" >"$T/passthrough_helpers.h" 2>/dev/null &&
		cc -O2 -o "$2" "$T/passthrough.c" $(pkg-config --cflags --libs fuse3) \
			2>"$T/pt-build.log"
}

part_pjdfstest() {
	local pjd lf cf ct pf=- pt=- ptpid
	command -v prove >/dev/null || skip "prove is not installed (Debian package perl)"
	pjd=$(src pjdfstest PJDFSTEST_SRC https://github.com/pjd/pjdfstest pjd+pjdfstest)
	[ -n "$pjd" ] || skip "no sources (set PJDFSTEST_SRC, or allow git clone of github.com/pjd/pjdfstest)"
	pjd_build "$pjd" "$T/pjd" || skip "it does not build: $(tail -3 "$T/pjd/build.log")"
	read -r cf ct <<<"$(pjd_run "$T/pjd" ckptfs_dir "$T/pjd-ckptfs.log")"
	cp "$T/pjd-ckptfs.log" "$LOGS/pjdfstest-ckptfs.log" 2>/dev/null
	lf=$(src libfuse LIBFUSE_SRC https://github.com/libfuse/libfuse libfuse+libfuse)
	if [ -z "$lf" ]; then
		say "libfuse sources not found: no passthrough comparison"
	elif passthrough "$lf" "$T/passthrough"; then
		mkdir -p "$T/ptmnt" "$T/ptdir"
		trap 'fusermount3 -uz "$T/ptmnt" 2>/dev/null' EXIT
		"$T/passthrough" -o allow_other,default_permissions "$T/ptmnt" -f &
		ptpid=$!
		poll_until 10 mountpoint -q "$T/ptmnt" || fail "passthrough did not mount"
		read -r pf pt <<<"$(pjd_run "$T/pjd" pt_dir "$T/pjd-pt.log")"
		cp "$T/pjd-pt.log" "$LOGS/pjdfstest-passthrough.log" 2>/dev/null
		fusermount3 -u "$T/ptmnt"
		wait "$ptpid"
	else
		say "libfuse passthrough does not build here: $(tail -2 "$T/pt-build.log")"
	fi
	say "pjdfstest failed/total subtests:  ckptfs $cf/$ct   libfuse passthrough $pf/$pt"
	echo "failed/total subtests: ckptfs $cf/$ct, passthrough $pf/$pt" >"$T/note"
	[ "$ct" -gt 0 ] || fail "no pjdfstest subtest ran in ckptfs (see $LOGS/pjdfstest-ckptfs.log)"
}

# ---- running the parts ---------------------------------------------------------------

R_NAME=() R_RES=() R_TIME=()

# recover: after a part during which ckptd or the mount died (or hung):
# unmount, SIGKILL a ckptd that does not answer, start it again, mount.
recover() {
	local pid
	_unmount_ckptfs_all
	pid=${CKPTD_PID[d]:-}
	if [ -n "$pid" ] && alive "$pid" && ! "$RAW" -s "$(sock d)" ping 2>/dev/null; then
		say "ckptd (pid $pid) does not answer: SIGKILL"
		kill9 d
	elif [ -n "$pid" ] && dead "$pid"; then
		_reap d
		say "ckptd (pid $pid) died, exit status $REAPED"
	fi
	[ -n "${CKPTD_PID[d]:-}" ] || start_ckptd d
	mount_ckptfs d "$M"
	say "ckptd and the mount are up again"
}

# run_part NAME FUNC [ARGS...]: FUNC in a subshell (a fail or skip in it
# ends only the part), its output in $LOGS/NAME.log; then ckptd and the
# mount must have survived it.
run_part() {
	local name=$1 log=$LOGS/$1.log start rc res secs
	shift
	selected "$name" || return 0
	start=$(now_ms)
	rm -f "$T/note"
	( SUBTEST=$name; "$@" ) >"$log" 2>&1 3>&1 </dev/null
	rc=$?
	case $rc in
	0) res=pass
	   [ ! -s "$T/note" ] || res="pass: $(head -1 "$T/note")" ;;
	77) res="SKIP $(sed -n 's/^SKIP: [^:]*: //p' "$log" | head -1)" ;;
	*) res="FAIL $(sed -n 's/^FAIL: [^:]*: //p' "$log" | head -1)"
	   [ "$res" != "FAIL " ] || res="FAIL exit status $rc: $(tail -1 "$log")" ;;
	esac
	if ! (assert_up d) >>"$log" 2>&1; then
		res="FAIL ckptd died or hung during $name (the part: $res)"
		recover >>"$log" 2>&1
	elif ! (assert_mounted "$M") >>"$log" 2>&1; then
		res="FAIL the mount died or hung during $name (the part: $res)"
		recover >>"$log" 2>&1
	fi
	secs=$((($(now_ms) - start + 500) / 1000))
	R_NAME+=("$name") R_RES+=("$res") R_TIME+=("$secs")
	case $res in
	pass*) say "PASS $name (${secs} s)${res#pass}" ;;
	SKIP*) say "SKIP $name: ${res#SKIP }" ;;
	*) say "FAIL $name (${secs} s): ${res#FAIL } (log: $log)" ;;
	esac
}

summary() {
	local i
	[ ${#R_NAME[@]} -gt 0 ] || return 0
	echo
	echo "acceptance summary (logs in $LOGS):"
	printf '  %-20s %-6s %7s  %s\n' part result time detail
	for i in "${!R_NAME[@]}"; do
		local r=${R_RES[$i]} word detail
		word=${r%% *}
		word=${word%:}
		detail=${r#"$word"}
		detail=${detail#:}
		detail=${detail# }
		printf '  %-20s %-6s %5s s  %s\n' "${R_NAME[$i]}" "$word" "${R_TIME[$i]}" "$detail"
	done
}
_acc_exit() {
	local st=$?
	summary
	(exit "$st")
	_cleanup
}
trap _acc_exit EXIT

drain_conf d -- keep=100
start_ckptd d
mount_ckptfs d "$M"

for _p in fsx-default fsx-large fsx-reopen fsx-uring fsx-aio fsstress; do
	selected "$_p" && { xfstests_build; break; }
done
run_part fsx-default part_fsx default 100000
run_part fsx-large part_fsx large 3000 -l $((2304 << 20)) -o $((4 << 20))
run_part fsx-reopen part_fsx reopen 20000 -c 8 -f -y -r 4096 -w 4096 -t 4096
run_part fsx-uring part_fsx uring 50000 -U
run_part fsx-aio part_fsx aio 50000 -A
run_part fsstress part_fsstress
run_part stress-ng part_stressng
run_part dbench part_dbench
run_part bonnie++ part_bonnie
run_part tar-rsync part_tree tar-rsync
run_part tar-rsync-hardlinks part_tree tar-rsync-hardlinks hardlinks
run_part pjdfstest part_pjdfstest

assert_up d
umount_ckptfs "$M"
stop_ckptd d
for _r in "${R_RES[@]}"; do
	[[ $_r == FAIL* ]] && exit 1
done
exit 0
