#!/bin/bash
# t_fuse_attr: modes, owners and times of files are kept in the version.
#  - in a version being written: create honours its mode (and the umask),
#    chmod, chown (uid and gid apart; it clears set-uid), utimensat with atime apart from mtime
#    (nanoseconds), UTIME_OMIT; a directory's mode and times while open;
#  - tar: a tree with modes, owners and old times extracted with -p into an
#    open version, then `tar --diff` against the archive is clean; rsync -a
#    of the same tree, then `rsync -a -c -i -n` reports no change;
#  - after the commit (the kernel's cached attributes last up to 1 s) a file
#    shows its owner, group and times, and its mode
#    without any write bit; the same after ckptd is killed and restarted
#    and the mount remounted (so from the manifest), and ckptctl ls --json
#    has the attributes;
#  - drained: the PFS copy of each file has its mode (set-id bits dropped)
#    and times; `ckptctl restore` gives each file its owner, group, mode
#    and times, from the local copy and again from the PFS alone (the local
#    copy removed: the PFS manifest keeps the attributes).
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
mount_ckptfs d "$M"
mkdir -p "$M/at/v1.tmp" || fail "mkdir failed"
V=$M/at/v1.tmp

# ---- syscalls --------------------------------------------------------------
/usr/bin/python3 - "$V" <<'PY' || fail "attribute syscalls in an open version"
import os, stat, sys
d = sys.argv[1]
os.umask(0o022)
fd = os.open(d + "/f", os.O_CREAT | os.O_WRONLY, 0o666)
os.write(fd, b"data")
os.close(fd)
st = os.stat(d + "/f")
assert stat.S_IMODE(st.st_mode) == 0o644, oct(st.st_mode)
assert st.st_uid == 0 and st.st_gid == 0, (st.st_uid, st.st_gid)
os.chmod(d + "/f", 0o4751)
assert stat.S_IMODE(os.stat(d + "/f").st_mode) == 0o4751
os.chown(d + "/f", 1234, -1)
os.chown(d + "/f", -1, 5678)
st = os.stat(d + "/f")
assert (st.st_uid, st.st_gid) == (1234, 5678), (st.st_uid, st.st_gid)
assert stat.S_IMODE(st.st_mode) == 0o751, oct(st.st_mode)   # chown drops suid
os.chmod(d + "/f", 0o4751)
os.utime(d + "/f", ns=(1_000_000_123, 2_000_000_456))
st = os.stat(d + "/f")
assert (st.st_atime_ns, st.st_mtime_ns) == (1_000_000_123, 2_000_000_456), st
os.utime(d + "/f", ns=(3_000_000_000, 2_000_000_456))
assert os.stat(d + "/f").st_atime_ns == 3_000_000_000
# A later write moves mtime to now, and it sticks after close.
fd = os.open(d + "/g", os.O_CREAT | os.O_WRONLY, 0o600)
os.write(fd, b"x")
os.close(fd)
os.utime(d + "/g", ns=(5, 7))
fd = os.open(d + "/g", os.O_WRONLY)
os.write(fd, b"y")
os.close(fd)
assert os.stat(d + "/g").st_mtime_ns > 7
os.mkdir(d + "/dir", 0o777)
assert stat.S_IMODE(os.stat(d + "/dir").st_mode) == 0o755
os.chmod(d + "/dir", 0o710)
assert stat.S_IMODE(os.stat(d + "/dir").st_mode) == 0o710
PY

# ---- tar and rsync -----------------------------------------------------------
/usr/bin/python3 - "$SRC" <<'PY' || fail "making the source tree"
import os, sys
r = sys.argv[1]
os.makedirs(r + "/a/b")
for i, (mode, own) in enumerate([(0o600, (0, 0)), (0o644, (1234, 5678)),
                                 (0o755, (4321, 0)), (0o400, (0, 99)),
                                 (0o2750, (1000, 1000))]):
    p = "%s/%s/f%d" % (r, ["", "a", "a/b"][i % 3], i)
    with open(p, "wb") as f:
        f.write(os.urandom(1000 * i + 1))
    os.chown(p, *own)
    os.chmod(p, mode)
    os.utime(p, ns=(1_600_000_000_000_000_000 + i, 1_500_000_000_123_456_789 + i))
os.chmod(r + "/a/b", 0o751)
PY
tar -C "$SRC" -cf "$T/a.tar" . || fail "tar c failed"
mkdir "$V/tar" "$V/rs" || fail "mkdir tar, rs failed"
tar -C "$V/tar" -xpf "$T/a.tar" || fail "tar x into the mount failed"
tar -C "$V/tar" --diff -f "$T/a.tar" >"$T/diff.out" 2>&1 ||
	fail "tar --diff in the open version: $(head -20 "$T/diff.out")"
rsync -a "$SRC/" "$V/rs/" || fail "rsync -a into the mount failed"
rsync -a -c -i -n "$SRC/" "$V/rs/" >"$T/rsync.out" 2>&1 || fail "rsync -n failed"
[ ! -s "$T/rsync.out" ] || fail "rsync -a -c sees changes: $(head -20 "$T/rsync.out")"
info "tar --diff clean, rsync -a -c: no change"

# ---- committed, then from the manifest after a restart -----------------------
committed_check() {
	/usr/bin/python3 - "$M/at/v1" "$SRC" >"$T/attr.out" 2>&1 <<'PY'

import os, stat, sys
d, src = sys.argv[1], sys.argv[2]
st = os.stat(d + "/f")
assert stat.S_IMODE(st.st_mode) == 0o4551, oct(st.st_mode)     # 4751 minus w
assert (st.st_uid, st.st_gid) == (1234, 5678), (st.st_uid, st.st_gid)
assert (st.st_atime_ns, st.st_mtime_ns) == (3_000_000_000, 2_000_000_456), st
for root, dirs, files in os.walk(src):
    for f in files:
        a = os.stat(os.path.join(root, f))
        # tar keeps whole seconds, rsync nanoseconds; neither keeps atime
        for top, res in (("tar", 10**9), ("rs", 1)):
            b = os.stat(os.path.join(d, top, os.path.relpath(root, src), f))
            assert stat.S_IMODE(b.st_mode) == stat.S_IMODE(a.st_mode) & ~0o222, (f, oct(a.st_mode), oct(b.st_mode))
            assert (a.st_uid, a.st_gid, a.st_mtime_ns // res) == \
                   (b.st_uid, b.st_gid, b.st_mtime_ns // res), (top, f, a, b)
PY
}
# committed_ok WHAT: the kernel may show the attributes it cached before the
# commit (write bits) for its attribute timeout (1 s): poll.
committed_ok() {
	poll_until 5 committed_check ||
		fail "$1: attributes of the committed version: $(tail -3 "$T/attr.out")"
}
mv "$M/at/v1.tmp" "$M/at/v1" || fail "commit failed"
committed_ok "at once"
umount_ckptfs "$M"
restart d
mount_ckptfs d "$M"
committed_ok "after a restart"
ctl d --json ls at v1 >"$T/ls.json" || fail "ckptctl --json ls failed"
grep -q '"mode"' "$T/ls.json" || fail "ckptctl --json ls has no modes: $(head -c 600 "$T/ls.json")"
umount_ckptfs "$M"

# ---- the PFS copy and restores -------------------------------------------------
ctl d wait at v1 drained --timeout "$(scaled 30)" >/dev/null || fail "v1 did not drain"
# restored DIR PFS: DIR holds SRC's files with their attributes (PFS: the
# PFS copy, owned by the job's owner, mode without set-id bits).
restored() {
	/usr/bin/python3 - "$1" "$SRC" "$2" <<'PY' || fail "attributes in $1"
import os, stat, sys
d, src, pfs = sys.argv[1], sys.argv[2], sys.argv[3] == "1"
st = os.stat(d + "/f")
assert stat.S_IMODE(st.st_mode) == (0o751 | 0o400 if pfs else 0o4751), oct(st.st_mode)
assert (st.st_atime_ns, st.st_mtime_ns) == (3_000_000_000, 2_000_000_456), st
if not pfs:
    assert (st.st_uid, st.st_gid) == (1234, 5678), (st.st_uid, st.st_gid)
for root, dirs, files in os.walk(src):
    for f in files:
        a = os.stat(os.path.join(root, f))
        b = os.stat(os.path.join(d, "rs", os.path.relpath(root, src), f))
        want = stat.S_IMODE(a.st_mode)
        if pfs:
            want = want & 0o777 | 0o400
        assert stat.S_IMODE(b.st_mode) == want, (f, oct(a.st_mode), oct(b.st_mode))
        assert a.st_mtime_ns == b.st_mtime_ns, (f, a, b)
        if not pfs:
            assert (a.st_uid, a.st_gid) == (b.st_uid, b.st_gid), (f, a, b)
PY
}
restored "$(pfs_vdir at v1)/files" 1
ctl d restore at v1 --to "$T/r1" >/dev/null || fail "restore failed"
restored "$T/r1" 0
ctl d rm at v1 >/dev/null || fail "rm of the local copy failed"
restart d
ctl d restore at v1 --to "$T/r2" >/dev/null || fail "restore from the PFS failed"
restored "$T/r2" 0
info "PFS copy, restore, restore from the PFS: attributes kept"
stop_ckptd d
