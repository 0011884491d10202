#!/bin/bash
# t_fuse_dirs: directories through the mount (issue 14).
#  - a tree with empty directories, directory modes, owners, old times and
#    user.* xattrs (tar -xp --xattrs, and mkdir/chmod/chown/utimensat/
#    setxattr on directories) in an open version; committed, each directory
#    is there (the empty ones too) with its mode (no write bits), owner,
#    mtime and xattrs: at once, after a SIGKILL of ckptd with a restart and
#    two clean restarts (remounted: from the manifest), in the PFS copy, and
#    in `ckptctl restore`, where `tar --diff` against the archive is clean;
#  - rmdir of a directory whose file was unlinked while still open (and
#    one whose file was closed just before the unlink, many times: the
#    kernel's RELEASE comes after close() returns) works; the open fd still
#    reads, writes and truncates the file (fstat is ESTALE once the
#    directory is gone: libfuse's path API); it is not in the committed
#    version, nor are the removed directories.
# TIMEOUT: 120
set -u
. "$(dirname "$0")/lib.sh"
need_fuse
has_ctl || skip "ckptctl is not built"

M=$T/mnt
SRC=$T/src
PFS=$T/pfs
drain_conf d
start_ckptd d
ctl d drain --pause >/dev/null || fail "drain --pause failed"
mount_ckptfs d "$M"
mkdir -p "$M/dj/v1.tmp" || fail "mkdir of the version failed"
V=$M/dj/v1.tmp

# ---- the source tree and its archive ----------------------------------------
/usr/bin/python3 - "$SRC" <<'PY' || fail "making the source tree"
import os, sys
r = sys.argv[1]
for d in ("a/b/c", "a/empty", "e1", "e2/deep/er", "x"):
    os.makedirs(os.path.join(r, d))
for i, f in enumerate(("a/f", "a/b/c/g", "x/h")):
    with open(os.path.join(r, f), "wb") as fh:
        fh.write(os.urandom(100 * i + 7))
os.setxattr(r + "/a/empty", "user.dir", b"empty dir")
os.setxattr(r + "/x", "user.x", b"\x00\x01")
# deepest first: a directory's mtime moves when an entry is made in it
for i, (d, mode, own) in enumerate([("e2/deep/er", 0o700, (0, 0)),
                                    ("e2/deep", 0o750, (1234, 99)),
                                    ("e2", 0o711, (0, 0)),
                                    ("a/b/c", 0o755, (4321, 4321)),
                                    ("a/b", 0o2750, (0, 1234)),
                                    ("a/empty", 0o705, (1234, 5678)),
                                    ("a", 0o755, (0, 0)),
                                    ("e1", 0o1777, (0, 0)),
                                    ("x", 0o700, (99, 99))]):
    p = os.path.join(r, d)
    os.chown(p, *own)
    os.chmod(p, mode)
    os.utime(p, ns=(1_600_000_000_000_000_000, 1_500_000_000_000_000_000 + i * 1_000_000_000))
PY
tar -C "$SRC" --xattrs --xattrs-include='user.*' -cf "$T/a.tar" . ||
	fail "tar c failed"
mkdir "$V/t" || fail "mkdir t failed"
tar -C "$V/t" --xattrs --xattrs-include='user.*' -xpf "$T/a.tar" ||
	fail "tar x into the mount failed"
tar -C "$V/t" --diff -f "$T/a.tar" >"$T/diff.out" 2>&1 ||
	fail "tar --diff in the open version: $(head -20 "$T/diff.out")"

# Directory syscalls through the mount, and an empty directory made by hand.
/usr/bin/python3 - "$V" <<'PY' || fail "directory syscalls in an open version"
import os, stat, sys
d = sys.argv[1]
os.umask(0)
os.mkdir(d + "/m", 0o751)
os.mkdir(d + "/m/in", 0o700)
os.chmod(d + "/m/in", 0o710)
os.chown(d + "/m/in", 777, 888)
os.setxattr(d + "/m/in", "user.k", b"v")
os.utime(d + "/m/in", ns=(3_000_000_000, 4_000_000_000))
os.utime(d + "/m", ns=(5_000_000_000, 6_000_000_000))
st = os.stat(d + "/m/in")
assert stat.S_IMODE(st.st_mode) == 0o710 and st.st_uid == 777, st
PY

# dirs_ok ROOT RW WHAT: ROOT/t is SRC's tree (modes, owners, mtimes, xattrs
# of the directories, empty ones there), ROOT/m as made above; RW 0: write
# bits off (a committed version), 1: as given, pfs: the PFS copy (owned by
# the job's owner, always open to it: mode | 0700, no set-id or sticky bit, no
# owners).
dirs_check() {
	/usr/bin/python3 - "$1" "$SRC" "$2" >"$T/dirs.out" 2>&1 <<'PY'
import os, stat, sys
root, src, how = sys.argv[1], sys.argv[2], sys.argv[3]
def want_mode(m):
    m = stat.S_IMODE(m)
    if how == "0":
        return m & ~0o222
    if how == "pfs":
        return (m & 0o777) | 0o700
    return m
def same(a, b, what):
    assert stat.S_ISDIR(b.st_mode), (what, oct(b.st_mode))
    assert stat.S_IMODE(b.st_mode) == want_mode(a.st_mode), (what, oct(a.st_mode), oct(b.st_mode))
    assert a.st_mtime_ns == b.st_mtime_ns, (what, a.st_mtime_ns, b.st_mtime_ns)
    if how != "pfs":
        assert (a.st_uid, a.st_gid) == (b.st_uid, b.st_gid), (what, a, b)
n = 0
for top, dirs, files in os.walk(src):
    for d in dirs:
        a = os.path.join(top, d)
        b = os.path.join(root, "t", os.path.relpath(a, src))
        same(os.stat(a), os.stat(b), b)
        if how != "pfs":
            for x in os.listxattr(a):
                assert os.getxattr(b, x) == os.getxattr(a, x), (b, x)
        n += 1
    for f in files:
        a = os.path.join(top, f)
        b = os.path.join(root, "t", os.path.relpath(a, src))
        assert open(a, "rb").read() == open(b, "rb").read(), b
assert n == 9, n
assert os.listdir(root + "/t/a/empty") == [] and os.listdir(root + "/e2" if False else root + "/t/e2/deep/er") == []
st = os.stat(root + "/m/in")
assert stat.S_IMODE(st.st_mode) == want_mode(0o710), oct(st.st_mode)
assert st.st_mtime_ns == 4_000_000_000, st
if how != "pfs":
    assert (st.st_uid, st.st_gid) == (777, 888), st
    assert os.getxattr(root + "/m/in", "user.k") == b"v"
st = os.stat(root + "/m")
assert stat.S_IMODE(st.st_mode) == want_mode(0o751), oct(st.st_mode)
PY
}
dirs_ok() {
	poll_until 5 dirs_check "$1" "$2" ||
		fail "$3: directories: $(tail -5 "$T/dirs.out")"
	info "$3: directories kept"
}
dirs_ok "$V" 1 "open version"

# ---- unlinked while open, then rmdir ------------------------------------------
/usr/bin/python3 - "$V" <<'PY' || fail "rmdir after an unlink of an open file"
import os, sys
d = sys.argv[1]
os.mkdir(d + "/gone")
fd = os.open(d + "/gone/f", os.O_CREAT | os.O_RDWR, 0o644)
os.write(fd, b"first")
os.unlink(d + "/gone/f")
assert os.fstat(fd).st_nlink == 0, os.fstat(fd)
os.rmdir(d + "/gone")
assert not os.path.exists(d + "/gone")
# (fstat now is ESTALE: libfuse's high-level API names a file by its path,
# and its directory has none left; reads and writes go by the handle.)
os.write(fd, b" second")
assert os.pread(fd, 100, 0) == b"first second", os.pread(fd, 100, 0)
os.ftruncate(fd, 5)
assert os.pread(fd, 100, 0) == b"first", os.pread(fd, 100, 0)
os.close(fd)
# Closed just before the unlink: the RELEASE may still be on its way.
for i in range(200):
    p = "%s/c%d" % (d, i)
    os.mkdir(p)
    with open(p + "/f", "wb") as f:
        f.write(b"x" * 100)
    os.unlink(p + "/f")
    os.rmdir(p)
# Open read-only across the commit (no writer: the commit may go).
os.mkdir(d + "/held")
with open(d + "/held/f", "wb") as f:
    f.write(b"held")
fd = os.open(d + "/held/f", os.O_RDONLY)
os.unlink(d + "/held/f")
os.rmdir(d + "/held")
os.rename(d, d[:-4])         # commit while fd is open
assert os.pread(fd, 100, 0) in (b"held", b""), os.pread(fd, 100, 0)
os.close(fd)
PY
info "rmdir after unlinks of open (or just closed) files; the fd still works"
ls -a "$M/dj/v1" >"$T/ls.out" || fail "ls of the committed version failed"
[ "$(tr '\n' ' ' <"$T/ls.out")" = ". .. m t " ] ||
	fail "committed version holds: $(tr '\n' ' ' <"$T/ls.out")"
ctl d ls dj v1 >"$T/ctl.out" || fail "ckptctl ls failed"
! grep -q "fuse_hidden\|gone\|held\|c[0-9]" "$T/ctl.out" ||
	fail "unlinked files in the committed version: $(grep "fuse_hidden\|gone\|held" "$T/ctl.out" | head -5)"
dirs_ok "$M/dj/v1" 0 "committed"

# ---- restarts: SIGKILL, then two clean ones -----------------------------------
umount_ckptfs "$M"
# A commit seals; only LOCAL survives a SIGKILL (ckpt_commit()).
ctl d wait dj v1 local --timeout "$(scaled 30)" >/dev/null || fail "v1 did not become LOCAL"
restart d
stop_ckptd d
start_ckptd d
stop_ckptd d
start_ckptd d
mount_ckptfs d "$M"
dirs_ok "$M/dj/v1" 0 "after a SIGKILL and two clean restarts"
umount_ckptfs "$M"

# ---- the PFS copy, restores --------------------------------------------------
ctl d restore dj v1 --to "$T/r1" >/dev/null || fail "restore of the local copy failed"
dirs_ok "$T/r1" 1 "restore of the local copy"
tar -C "$T/r1/t" --diff -f "$T/a.tar" >"$T/diff.out" 2>&1 ||
	fail "tar --diff of the restored tree: $(head -20 "$T/diff.out")"
ctl d drain --resume >/dev/null || fail "drain --resume failed"
ctl d wait dj v1 drained --timeout "$(scaled 30)" >/dev/null || fail "v1 did not drain"
dirs_ok "$(pfs_vdir dj v1)/files" pfs "PFS copy"
ctl d rm dj v1 >/dev/null || fail "rm of the local copy failed"
restart d
ctl d restore dj v1 --to "$T/r2" >/dev/null || fail "restore from the PFS failed"
dirs_ok "$T/r2" 1 "restore from the PFS"
tar -C "$T/r2/t" --diff -f "$T/a.tar" >"$T/diff.out" 2>&1 ||
	fail "tar --diff of the tree restored from the PFS: $(head -20 "$T/diff.out")"
info "tar --diff clean on both restored trees"
stop_ckptd d
