#!/bin/bash
# t_fuse_xattr: extended attributes in the "user." namespace are kept per
# file in the version.
#  - open version: set, get, list, replace, XATTR_CREATE on an existing
#    name (EEXIST), XATTR_REPLACE of a missing one and removing a missing
#    one (ENODATA), binary values, an empty value, other namespaces (set:
#    ENOTSUP; get: ENODATA), more than CKPT_XATTR_MAX (4096) bytes in all
#    (ENOSPC); a directory's while open;
#  - committed: the same values, setxattr EROFS; after ckptd is killed,
#    restarted and the mount remounted (from the manifest);
#  - drained: the PFS copy carries them; `ckptctl restore` sets them, from
#    the local copy and from the PFS alone.
# TIMEOUT: 90
set -u
. "$(dirname "$0")/lib.sh"
need_fuse
has_ctl || skip "ckptctl is not built"

M=$T/mnt
PFS=$T/pfs
drain_conf d
start_ckptd d
ctl d drain --pause >/dev/null || fail "drain --pause failed"
mount_ckptfs d "$M"
mkdir -p "$M/xa/v1.tmp/dir" || fail "mkdir failed"
echo data >"$M/xa/v1.tmp/f" || fail "write failed"

/usr/bin/python3 - "$M/xa/v1.tmp" <<'PY' || fail "xattrs in an open version"
import errno, os, sys
d = sys.argv[1]
f = d + "/f"
def err(fn, *a):
    try:
        fn(*a)
    except OSError as e:
        return e.errno
    return 0
os.setxattr(f, "user.a", b"1")
os.setxattr(f, "user.bin", b"\x00\xff\x01")
os.setxattr(f, "user.empty", b"")
os.setxattr(f, "user.a", b"two")
assert os.getxattr(f, "user.a") == b"two"
assert os.getxattr(f, "user.bin") == b"\x00\xff\x01"
assert os.getxattr(f, "user.empty") == b""
assert sorted(os.listxattr(f)) == ["user.a", "user.bin", "user.empty"], os.listxattr(f)
assert err(os.setxattr, f, "user.a", b"x", os.XATTR_CREATE) == errno.EEXIST
assert err(os.setxattr, f, "user.nope", b"x", os.XATTR_REPLACE) == errno.ENODATA
assert err(os.removexattr, f, "user.nope") == errno.ENODATA
assert err(os.setxattr, f, "trusted.x", b"x") == errno.EOPNOTSUPP
assert err(os.getxattr, f, "security.capability") == errno.ENODATA
assert err(os.setxattr, f, "user.big", b"z" * 5000) == errno.ENOSPC
os.setxattr(f, "user.gone", b"bye")
os.removexattr(f, "user.gone")
assert "user.gone" not in os.listxattr(f)
os.setxattr(d + "/dir", "user.d", b"dv")
assert os.getxattr(d + "/dir", "user.d") == b"dv"
PY

# committed_ok DIR WHAT: f has the attributes set above.
committed_ok() {
	/usr/bin/python3 - "$1" <<'PY' || fail "$2: xattrs differ"
import os, sys
f = sys.argv[1] + "/f"
assert sorted(os.listxattr(f)) == ["user.a", "user.bin", "user.empty"], os.listxattr(f)
assert os.getxattr(f, "user.a") == b"two"
assert os.getxattr(f, "user.bin") == b"\x00\xff\x01"
PY
}
mv "$M/xa/v1.tmp" "$M/xa/v1" || fail "commit failed"
committed_ok "$M/xa/v1" "committed"
out=$(/usr/bin/python3 -c 'import os, sys; os.setxattr(sys.argv[1], "user.z", b"1")' \
	"$M/xa/v1/f" 2>&1) && fail "setxattr in a committed version worked"
[[ $out == *"Read-only file system"* ]] || fail "setxattr committed: '$out', want EROFS"
umount_ckptfs "$M"
# A commit seals; only LOCAL survives a SIGKILL (ckpt_commit()).
ctl d wait xa v1 local --timeout "$(scaled 30)" >/dev/null || fail "v1 did not become LOCAL"
restart d
mount_ckptfs d "$M"
committed_ok "$M/xa/v1" "after a restart"
umount_ckptfs "$M"

ctl d drain --resume >/dev/null || fail "drain --resume failed"
ctl d wait xa v1 drained --timeout "$(scaled 30)" >/dev/null || fail "v1 did not drain"
committed_ok "$(pfs_vdir xa v1)/files" "PFS copy"
ctl d restore xa v1 --to "$T/r1" >/dev/null || fail "restore failed"
committed_ok "$T/r1" "restore"
ctl d rm xa v1 >/dev/null || fail "rm of the local copy failed"
restart d
ctl d restore xa v1 --to "$T/r2" >/dev/null || fail "restore from the PFS failed"
committed_ok "$T/r2" "restore from the PFS"
info "user.* xattrs: open, committed, restart, PFS, restores"
stop_ckptd d
