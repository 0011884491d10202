#!/bin/bash
# t_fuse_basic: ckptfs mounted for real over a private ckptd.
#  data:       into MOUNT/job/v1.tmp: sequential writes (dd with conv=fsync,
#              cat, odd block sizes), random pwrites with overwrites and
#              holes (read back while the version is open), a zip written by
#              Python's zipfile (which seeks back to patch each member's
#              header), a header patched with dd conv=notrunc, truncate and
#              ftruncate down and up, unlink, rename of a file and of a
#              directory; the same done to a copy outside the mount.  Then
#              `mv v1.tmp v1` commits it, and the mount matches the copy
#              byte for byte: at once, after a remount, and after ckptd is
#              killed with SIGKILL and restarted (a version left open at the
#              kill is gone; the mount keeps working).  A version left open at
#              a clean unmount is gone after it.
#  erofs:      a committed version is read-only: write, append, create,
#              unlink, truncate, ftruncate, mkdir and rename in it give EROFS
#              ("Read-only file system") and change nothing.
#  marker:     creating .commit in a version commits it.
#  reconnect:  after a ckptd restart, the first read and the first mkdir
#              through the mount work (ckptfs reconnects).
#  ctlcommit:  `ckptctl commit JOB VERSION` commits a version written through
#              the mount, which then refuses writes (EROFS) like any other.
#  ctllate:    a write on a file still open across `ckptctl commit` fails
#              (EROFS, at write, fsync or close) and is not stored.
#  autocommit: with -o autocommit=1 a version is committed once its files
#              are closed and it is idle, and not while a file is open.
# TIMEOUT: 300
set -u
. "$(dirname "$0")/lib.sh"
need_fuse

JOB=basic

# in_sync REF DIR: the files under DIR are those under REF, byte for byte
# (but for the empty .commit marker ckptfs shows in committed versions).
# (Temporary files, not <(...): an unreaped process substitution would be
# counted by run-integ.sh as a process left behind.)
in_sync() {
	tree_sums "$1" >"$T/sums.ref" && tree_sums -m "$2" >"$T/sums.dir" &&
		diff "$T/sums.ref" "$T/sums.dir" >"$T/diff.out" 2>&1
}

# same_tree REF DIR WHAT: fail unless DIR holds exactly REF's files and bytes.
same_tree() {
	local f
	check_marker "$2"
	in_sync "$1" "$2" && return 0
	for f in $(cd "$1" && find . -type f | sort); do
		cmp "$1/$f" "$2/$f" 2>&1 | head -1
	done
	fail "$3: $2 differs from $1: $(head -20 "$T/diff.out")"
}

# sealed NAME JOB VERSION: ckptctl lists the version as sealed.
sealed() {
	local st
	st=$(ctl "$1" ls "$2" 2>/dev/null | awk -v v="$3" '$1 == v { print $2 }')
	[ "$st" = sealed ]
}

wait_sealed() {
	poll_until 30 sealed "$@" ||
		fail "$2/$3 is not sealed: $(ctl "$1" ls "$2" 2>&1 | tr '\n' ';')"
}

# gone DIR NAME: NAME is neither listed in DIR nor reachable.
gone() {
	[ ! -e "$1/$2" ] && ! ls -a "$1" 2>/dev/null | grep -qxF "$2"
}

# Random pwrites, with overwrites, holes past the end and short writes, done
# identically to the file in the mount and to a reference copy; the open file
# is read back at random and compared with the reference as it goes.
RANDW_PY='
import os, random, sys
mnt, ref, seed, size, nops = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
r = random.Random(seed)
fm = os.open(mnt, os.O_RDWR | os.O_CREAT, 0o644)
fr = os.open(ref, os.O_RDWR | os.O_CREAT, 0o644)
end = 0
for i in range(nops):
    kind = r.random()
    if kind < 0.6:
        n = r.randint(1, 4096)
    elif kind < 0.95:
        n = r.randint(4096, 256 << 10)
    else:
        n = r.randint(1 << 20, 3 << 20)
    if r.random() < 0.1 and end < size + (4 << 20):
        off = end + r.randint(0, 1 << 20)     # past the end: a hole
    elif r.random() < 0.3 and end:
        off = r.randrange(0, end)              # an overwrite
    else:
        off = r.randrange(0, size)
    data = r.randbytes(n)
    for fd in (fm, fr):
        if os.pwrite(fd, data, off) != n:
            sys.exit("short pwrite at %d" % off)
    end = max(end, off + n)
    if i % 97 == 0:
        o = r.randrange(0, end)
        l = r.randint(1, 1 << 20)
        a, b = os.pread(fm, l, o), os.pread(fr, l, o)
        if a != b:
            sys.exit("read-back of the open file differs at %d+%d (got %d bytes, want %d)" % (o, l, len(a), len(b)))
os.fsync(fm)
if os.fstat(fm).st_size != os.fstat(fr).st_size:
    sys.exit("size %d, want %d" % (os.fstat(fm).st_size, os.fstat(fr).st_size))
os.close(fm)
os.close(fr)
'

# A zip written by zipfile: each member's local header is written first and
# patched (seek back, rewrite, seek forward) when the member is closed.
ZIP_PY='
import random, sys, zipfile
r = random.Random(7)
with zipfile.ZipFile(sys.argv[1], "w") as z:
    for i in range(24):
        zi = zipfile.ZipInfo("dir%d/member%02d.bin" % (i % 3, i), date_time=(2024, 1, 2, 3, 4, 6))
        zi.compress_type = zipfile.ZIP_DEFLATED if i % 2 else zipfile.ZIP_STORED
        n = r.randint(0, 1 << 20)
        data = r.randbytes(n // 2) + bytes([i]) * (n - n // 2)
        with z.open(zi, "w") as f:
            for k in range(0, len(data), 65536):
                f.write(data[k:k + 65536])
with zipfile.ZipFile(sys.argv[1]) as z:
    bad = z.testzip()
    if bad:
        sys.exit("zip member %s is damaged" % bad)
'

# ---- data -------------------------------------------------------------------

data_case() {
	local M=$T/mnt REF=$T/ref V out
	ckptd_conf d keep=100 staging=128M
	start_ckptd d
	mount_ckptfs d "$M"
	V=$M/$JOB/v1.tmp
	mkdir -p "$REF/sub/deeper" "$REF/dir" || fail "mkdir $REF"
	mkdir "$M/$JOB" || fail "mkdir of a job directory failed"
	mkdir "$V" || fail "mkdir $V failed"
	mkdir -p "$V/sub/deeper" "$V/dir" || fail "mkdir -p inside the version failed"
	[ -d "$M/$JOB/v1.tmp/sub/deeper" ] || fail "a new subdirectory is not a directory"

	# Sequential: dd (1 MiB and odd block sizes) and cat.
	dd if=/dev/urandom of="$REF/seq.bin" bs=1M count=40 status=none || fail "dd urandom"
	dd if="$REF/seq.bin" of="$V/seq.bin" bs=1M conv=fsync status=none 2>"$T/dd.err" ||
		fail "dd bs=1M conv=fsync into the mount: $(cat "$T/dd.err")"
	dd if="$REF/seq.bin" of="$V/sub/odd.bin" bs=12345 conv=fsync status=none 2>"$T/dd.err" ||
		fail "dd bs=12345 into the mount: $(cat "$T/dd.err")"
	cp "$REF/seq.bin" "$REF/sub/odd.bin"
	head -c 5000001 "$REF/seq.bin" >"$REF/sub/deeper/cat.bin"
	cat "$REF/sub/deeper/cat.bin" >"$V/sub/deeper/cat.bin" || fail "cat into the mount"
	: >"$V/empty" || fail "creating an empty file"
	: >"$REF/empty"
	cmp "$REF/seq.bin" "$V/seq.bin" || fail "seq.bin reads back wrong while the version is open"
	info "[data] sequential: 40 MiB dd (1 MiB and 12345-byte blocks), cat, empty file"

	# Random pwrites with overwrites and holes.
	/usr/bin/python3 -c "$RANDW_PY" "$V/rand.bin" "$REF/rand.bin" 11 $((16 << 20)) 3000 \
		2>"$T/py.err" || fail "random writes: $(tail -3 "$T/py.err")"
	/usr/bin/python3 -c "$RANDW_PY" "$V/sub/deeper/rand2.bin" "$REF/sub/deeper/rand2.bin" 12 \
		$((1 << 20)) 500 2>"$T/py.err" || fail "random writes (2): $(tail -3 "$T/py.err")"
	info "[data] random: 3500 pwrites, overwrites, holes, read back while open"

	# A zip writer patching headers; and a header patched with dd.
	/usr/bin/python3 -c "$ZIP_PY" "$V/dir/archive.zip" 2>"$T/py.err" ||
		fail "zipfile writing into the mount: $(tail -3 "$T/py.err")"
	/usr/bin/python3 -c "$ZIP_PY" "$REF/dir/archive.zip" || fail "zipfile outside the mount"
	cmp "$REF/dir/archive.zip" "$V/dir/archive.zip" || fail "the zip differs"
	dd if=/dev/urandom of="$REF/hdr.bin" bs=1M count=8 status=none
	cp "$REF/hdr.bin" "$V/hdr.bin" || fail "cp into the mount"
	for f in "$REF/hdr.bin" "$V/hdr.bin"; do
		printf 'CKPTHDR1 len=%016d crc=%08x' 8388608 3735928559 |
			dd of="$f" conv=notrunc status=none || fail "patching the header of $f"
		printf 'patched-in-the-middle' |
			dd of="$f" bs=1 seek=4100001 conv=notrunc status=none || fail "patching $f"
	done
	cmp "$REF/hdr.bin" "$V/hdr.bin" || fail "the patched header reads back wrong"
	info "[data] zipfile (header patches) and dd conv=notrunc patches"

	# Truncate down and up (the grown part reads as zeros), with truncate(1)
	# and ftruncate(2); truncate to 0 and rewrite.
	for d in "$REF" "$V"; do
		cp "$REF/seq.bin" "$d/trunc.bin" || fail "cp to $d/trunc.bin"
		truncate -s 5000000 "$d/trunc.bin" || fail "truncate down in $d"
		truncate -s 9000000 "$d/trunc.bin" || fail "truncate up in $d"
		printf 'tail' >>"$d/trunc.bin" || fail "append after truncate in $d"
		cp "$REF/hdr.bin" "$d/ftrunc.bin" || fail "cp to $d/ftrunc.bin"
		out=$(fsop ftruncate "$d/ftrunc.bin" 1000000)
		[ "$out" = ok ] || fail "ftruncate down in $d: $out"
		out=$(fsop ftruncate "$d/ftrunc.bin" 3000000)
		[ "$out" = ok ] || fail "ftruncate up in $d: $out"
		cp "$REF/hdr.bin" "$d/zero.bin" || fail "cp to $d/zero.bin"
		truncate -s 0 "$d/zero.bin" || fail "truncate to 0 in $d"
		printf 'rewritten' >"$d/zero.bin" || fail "rewrite after truncate in $d"
	done
	[ "$(stat -c %s "$V/trunc.bin")" = 9000004 ] || fail "trunc.bin has size $(stat -c %s "$V/trunc.bin")"
	cmp "$REF/trunc.bin" "$V/trunc.bin" || fail "truncate down/up reads back wrong"
	info "[data] truncate and ftruncate down and up"

	# unlink; rename of a file (replacing one) and of a directory.
	for d in "$REF" "$V"; do
		printf 'doomed' >"$d/doomed" && rm "$d/doomed" || fail "unlink in $d"
		printf 'old' >"$d/target" && printf 'new content' >"$d/target.part" ||
			fail "write in $d"
		mv "$d/target.part" "$d/target" || fail "rename over a file in $d"
		mv "$d/dir" "$d/renamed-dir" || fail "rename of a directory in $d"
	done
	gone "$V" doomed || fail "an unlinked file is still there"
	gone "$V" dir || fail "a renamed directory is still there under its old name"
	same_tree "$REF" "$V" "the open version"
	info "[data] unlink, rename of a file over another and of a directory"

	# Commit by renaming v1.tmp to v1.
	mv "$M/$JOB/v1.tmp" "$M/$JOB/v1" || fail "mv v1.tmp v1 (the commit) failed"
	wait_sealed d "$JOB" v1
	gone "$M/$JOB" v1.tmp || fail "v1.tmp is still listed after the commit"
	same_tree "$REF" "$M/$JOB/v1" "the committed version"
	tree_shape "$REF" >"$T/shape.ref"
	tree_shape -m "$M/$JOB/v1" >"$T/shape.dir"
	diff "$T/shape.ref" "$T/shape.dir" >"$T/diff.out" ||
		fail "stat/readdir differ: $(head "$T/diff.out")"
	ctl d verify "$JOB" v1 >/dev/null || fail "ckptctl verify of v1 failed"
	info "[data] mv v1.tmp v1 committed it; byte for byte; ckptctl verify ok"

	# After a remount.
	umount_ckptfs "$M"
	mount_ckptfs d "$M"
	same_tree "$REF" "$M/$JOB/v1" "after a remount"
	info "[data] same after a remount"

	# A version open when ckptd is killed with SIGKILL is gone; v1 survives,
	# through the same mount and a new one.
	mkdir "$M/$JOB/v2.tmp" || fail "mkdir v2.tmp"
	dd if=/dev/urandom of="$M/$JOB/v2.tmp/open.bin" bs=1M count=4 conv=fsync status=none ||
		fail "writing v2.tmp"
	kill9 d
	restart d
	poll_until 20 in_sync "$REF" "$M/$JOB/v1" ||
		fail "after ckptd SIGKILL + restart, v1 through the mount: $(head -5 "$T/diff.out")"
	poll_until 20 gone "$M/$JOB" v2.tmp ||
		fail "v2.tmp, open when ckptd was killed, is still there: $(ls "$M/$JOB" 2>&1)"
	case $(vstate d "$JOB" v2) in
	incomplete | failed | absent) ;;
	*) fail "v2 is '$(vstate d "$JOB" v2)' after the crash, want incomplete" ;;
	esac
	assert_mounted "$M"
	# The mount still writes (the reconnect sub-test checks that the first
	# call after the restart already works).
	poll_until 10 mkdir "$M/$JOB/v3.tmp" 2>/dev/null || fail "mkdir v3.tmp after the ckptd restart"
	cp "$REF/sub/deeper/cat.bin" "$M/$JOB/v3.tmp/after-restart.bin" ||
		fail "writing after the ckptd restart"
	mv "$M/$JOB/v3.tmp" "$M/$JOB/v3" || fail "committing v3 after the ckptd restart"
	wait_sealed d "$JOB" v3
	cmp "$REF/sub/deeper/cat.bin" "$M/$JOB/v3/after-restart.bin" || fail "v3 reads back wrong"
	umount_ckptfs "$M"
	mount_ckptfs d "$M"
	same_tree "$REF" "$M/$JOB/v1" "after ckptd SIGKILL + restart and a remount"
	gone "$M/$JOB" v2.tmp && gone "$M/$JOB" v2 || fail "v2 is back after a remount"
	info "[data] ckptd SIGKILL + restart: v1 intact, open v2 gone, mount still writes"

	# A version not committed at a clean unmount is aborted.
	mkdir "$M/$JOB/v4.tmp" || fail "mkdir v4.tmp"
	cp "$REF/hdr.bin" "$M/$JOB/v4.tmp/x.bin" || fail "writing v4.tmp"
	umount_ckptfs "$M"
	case $(vstate d "$JOB" v4) in
	failed | absent) ;;
	*) fail "v4, open at the unmount, is '$(vstate d "$JOB" v4)', want failed" ;;
	esac
	mount_ckptfs d "$M"
	gone "$M/$JOB" v4.tmp && gone "$M/$JOB" v4 || fail "v4 is listed after the unmount"
	same_tree "$REF" "$M/$JOB/v1" "at the end"
	umount_ckptfs "$M"
	stop_ckptd d
	info "[data] a version open at a clean unmount is gone after it"
}

# ---- reconnect ----------------------------------------------------------------

# After ckptd restarts, the very first read and the very first mkdir through
# the mount work: ckptfs reconnects rather than failing the call.
reconnect_case() {
	local M=$T/mnt out bad=()
	ckptd_conf r keep=100
	start_ckptd r
	mount_ckptfs r "$M"
	mkdir -p "$M/$JOB/r1.tmp" && printf 'survivor' >"$M/$JOB/r1.tmp/f" ||
		fail "writing r1.tmp"
	mv "$M/$JOB/r1.tmp" "$M/$JOB/r1" || fail "commit of r1"
	wait_sealed r "$JOB" r1
	restart r
	out=$(cat "$M/$JOB/r1/f" 2>&1)
	[ "$out" = survivor ] || bad+=("first read after the restart: $out")
	out=$(mkdir "$M/$JOB/r2.tmp" 2>&1) || bad+=("first mkdir of a version after the restart: $out")
	# Once the mount recovers, both work.
	poll_until 10 grep -qx survivor "$M/$JOB/r1/f" || bad+=("r1 never readable again")
	[ -d "$M/$JOB/r2.tmp" ] || poll_until 10 mkdir "$M/$JOB/r2.tmp" 2>/dev/null ||
		bad+=("r2.tmp never made")
	[ ${#bad[@]} = 0 ] || fail "ckptfs did not reconnect transparently: $(printf '%s; ' "${bad[@]}")"
	umount_ckptfs "$M"
	info "[reconnect] the first read and mkdir after a ckptd restart work"
}

# ---- erofs ------------------------------------------------------------------

erofs_case() {
	local M=$T/mnt V op err out
	ckptd_conf e keep=100
	start_ckptd e
	mount_ckptfs e "$M"
	mkdir -p "$M/$JOB/ro.tmp/d" || fail "mkdir -p ro.tmp/d"
	printf 'hello' >"$M/$JOB/ro.tmp/f" && printf 'inner' >"$M/$JOB/ro.tmp/d/g" ||
		fail "writing ro.tmp"
	mv "$M/$JOB/ro.tmp" "$M/$JOB/ro" || fail "commit by rename"
	wait_sealed e "$JOB" ro
	V=$M/$JOB/ro
	check_errno EROFS write "$V/f"
	check_errno EROFS append "$V/f"
	check_errno EROFS create "$V/new"
	check_errno EROFS create "$V/d/new"
	check_errno EROFS unlink "$V/f"
	check_errno EROFS unlink "$V/d/g"
	check_errno EROFS truncate "$V/f" 0
	check_errno EROFS truncate "$V/f" 100
	check_errno EROFS ftruncate "$V/f" 0
	check_errno EROFS mkdir "$V/newdir"
	check_errno EROFS rename "$V/f" "$V/f2"
	check_errno EROFS rename "$V/d" "$V/d2"
	checks_done "a committed version is not read-only"
	# What a shell user sees.
	err=$( { echo more >>"$V/f"; } 2>&1) && fail "appending to a committed file succeeded"
	case $err in *"Read-only file system"*) ;; *) fail "append: '$err', want Read-only file system" ;; esac
	err=$(rm -f "$V/d/g" 2>&1) && fail "rm in a committed version succeeded"
	case $err in *"Read-only file system"*) ;; *) fail "rm: '$err', want Read-only file system" ;; esac
	[ "$(cat "$V/f")" = hello ] && [ "$(cat "$V/d/g")" = inner ] ||
		fail "the committed files changed"
	out=$(fsop list "$V")
	[ "${out/ .commit/}" = "ok d f" ] || fail "the committed version lists '$out'"
	ctl e verify "$JOB" ro >/dev/null || fail "ckptctl verify failed"
	umount_ckptfs "$M"
	info "[erofs] write, append, create, unlink, truncate, ftruncate, mkdir, rename: EROFS"
}

# ---- marker -----------------------------------------------------------------

marker_case() {
	local M=$T/mnt
	ckptd_conf m keep=100
	start_ckptd m
	mount_ckptfs m "$M"
	mkdir -p "$M/$JOB/mk/sub" || fail "mkdir"
	dd if=/dev/urandom of="$T/a.bin" bs=1M count=3 status=none
	cp "$T/a.bin" "$M/$JOB/mk/sub/a.bin" || fail "cp into mk"
	[ "$(vstate m "$JOB" mk)" = open ] || fail "mk is '$(vstate m "$JOB" mk)' before the marker, want open"
	touch "$M/$JOB/mk/.commit" 2>"$T/touch.err" || fail "touch .commit: $(cat "$T/touch.err")"
	wait_sealed m "$JOB" mk
	cmp "$T/a.bin" "$M/$JOB/mk/sub/a.bin" || fail "mk reads back wrong"
	expect_errno EROFS create "$M/$JOB/mk/late"
	ctl m verify "$JOB" mk >/dev/null || fail "ckptctl verify failed"
	umount_ckptfs "$M"
	info "[marker] touch .commit committed the version"
}

# ---- ckptctl commit ---------------------------------------------------------

# Write, run ckptctl commit while the file is open, then write again: the
# late write (or its fsync, or close) must fail with EROFS.
LATE_PY='
import errno, os, subprocess, sys
path, ctl = sys.argv[1], sys.argv[2:]
fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o644)
os.write(fd, b"a" * 100000)
os.fsync(fd)
subprocess.run(ctl, check=True, stdout=subprocess.DEVNULL)
err = None
for step, call in (("pwrite", lambda: os.pwrite(fd, b"late", 0)),
                   ("fsync", lambda: os.fsync(fd)), ("close", lambda: os.close(fd))):
    try:
        call()
    except OSError as e:
        err = err or "%s at %s" % (errno.errorcode.get(e.errno, e.errno), step)
        if step != "close":
            try:
                os.close(fd)
            except OSError:
                pass
        break
if err is None:
    sys.exit("a write after the commit succeeded (pwrite, fsync and close)")
print(err)
'

ctlcommit_case() {
	local M=$T/mnt out
	ckptd_conf c keep=100
	start_ckptd c
	mount_ckptfs c "$M"
	mkdir -p "$M/$JOB/cc" || fail "mkdir"
	dd if=/dev/urandom of="$T/b.bin" bs=1M count=5 status=none
	cp "$T/b.bin" "$M/$JOB/cc/b.bin" || fail "cp into cc"
	ctl c commit "$JOB" cc || fail "ckptctl commit failed"
	wait_sealed c "$JOB" cc
	cmp "$T/b.bin" "$M/$JOB/cc/b.bin" || fail "cc reads back wrong"
	info "[ctlcommit] ckptctl commit committed the version"
	# The mount must now treat it as committed, as if it had committed it.
	check_errno EROFS write "$M/$JOB/cc/b.bin"
	check_errno EROFS create "$M/$JOB/cc/new"
	check_errno EROFS truncate "$M/$JOB/cc/b.bin" 0
	cmp "$T/b.bin" "$M/$JOB/cc/b.bin" || fail "cc changed after the writes were refused"
	checks_done "after ckptctl commit, the version is not read-only through the mount"
	umount_ckptfs "$M"
}

ctllate_case() {
	local M=$T/mnt out
	ckptd_conf c keep=100
	start_ckptd c
	mount_ckptfs c "$M"
	mkdir -p "$M/$JOB/cc2" || fail "mkdir cc2"
	out=$(/usr/bin/python3 -c "$LATE_PY" "$M/$JOB/cc2/f" "$CKPTCTL" -s "$(sock c)" \
		commit "$JOB" cc2 2>&1) || fail "a write after ckptctl commit on a file still open: $out"
	[ "${out%% *}" = EROFS ] || fail "a write after ckptctl commit on a file still open: $out, want EROFS"
	wait_sealed c "$JOB" cc2
	[ "$(head -c 4 "$M/$JOB/cc2/f")" = aaaa ] || fail "the late write reached the committed file"
	[ "$(stat -c %s "$M/$JOB/cc2/f")" = 100000 ] || fail "cc2/f has the wrong size"
	umount_ckptfs "$M"
	info "[ctllate] a write after ckptctl commit on a file still open: EROFS, not stored"
}

# ---- autocommit -------------------------------------------------------------

autocommit_case() {
	local M=$T/mnt
	ckptd_conf a keep=100
	start_ckptd a
	mount_ckptfs a "$M" autocommit=1
	mkdir -p "$M/$JOB/ac/x" || fail "mkdir"
	dd if=/dev/urandom of="$T/c.bin" bs=1M count=6 status=none
	cp "$T/c.bin" "$M/$JOB/ac/x/c.bin" || fail "cp into ac"
	poll_until 15 sealed a "$JOB" ac ||
		fail "ac not committed 15 s after its files were closed (autocommit=1)"
	cmp "$T/c.bin" "$M/$JOB/ac/x/c.bin" || fail "ac reads back wrong"
	info "[autocommit] committed once closed and idle"

	# While a file is open, no commit however long it idles.
	mkdir "$M/$JOB/ac2" || fail "mkdir ac2"
	exec 8>"$M/$JOB/ac2/held" || fail "opening ac2/held"
	printf 'held open' >&8
	if poll_until 4 sealed a "$JOB" ac2; then
		exec 8>&-
		fail "ac2 was committed while a file in it was open"
	fi
	exec 8>&-
	poll_until 15 sealed a "$JOB" ac2 || fail "ac2 not committed after its file was closed"
	[ "$(cat "$M/$JOB/ac2/held")" = "held open" ] || fail "ac2/held reads back wrong"
	umount_ckptfs "$M"
	info "[autocommit] not while a file was open; committed after its close"
}

subtest data data_case
subtest erofs erofs_case
subtest marker marker_case
subtest reconnect reconnect_case
subtest ctlcommit ctlcommit_case
subtest ctllate ctllate_case
subtest autocommit autocommit_case
finish
