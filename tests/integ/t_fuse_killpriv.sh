#!/bin/bash
# t_fuse_killpriv: set-uid and set-gid bits go as on a local file system
# (libfuse's FUSE_CAP_HANDLE_KILLPRIV leaves it to ckptfs; pjdfstest
# chmod/12).  In a job of a real uid (useradd), that uid:
#  - writes (O_WRONLY: direct I/O; O_RDWR: the page cache) a file 04777,
#    02777, 06777: 0777 after the write, seen by fstat at once; 02767 (no
#    group execute: not a set-gid program) keeps its bit;
#  - truncate, ftruncate, open with O_TRUNC and fallocate clear them too;
#  - root (CAP_FSETID) writes and truncates and keeps them;
#  - chown by root clears set-uid (and set-gid with group execute);
#  - committed, the cleared modes are what the version holds;
#  - drained, its local copy removed and ckptd killed, the version is read
#    from the PFS with the set-id bits the owner kept and the owner root
#    gave ch2 (ckptd's manifest is root's: trusted); a restore as root
#    gives them back.
# TIMEOUT: 60
set -u
. "$(dirname "$0")/lib.sh"
need_fuse
has_ctl || skip "ckptctl is not built"

U=cktk$$
test_users "$U"
chmod 755 "$T"
M=$T/mnt
PFS=$T/pfs
drain_conf d
start_ckptd d
mount_ckptfs d "$M"
as "$U" mkdir -p "$M/kp/v1.tmp" || fail "mkdir as $U failed"
V=$M/kp/v1.tmp

# As the job's owner (not root).
as "$U" /usr/bin/python3 - "$V" <<'PY' || fail "set-id bits as the job's owner"
import os, stat, sys
d = sys.argv[1]
def mk(name, mode):
    p = os.path.join(d, name)
    with open(p, "wb") as f:
        f.write(b"0123456789")
    os.chmod(p, mode)
    assert stat.S_IMODE(os.stat(p).st_mode) == mode, (name, oct(os.stat(p).st_mode))
    return p
def mode(p):
    return stat.S_IMODE(os.stat(p).st_mode)
for flags, tag in ((os.O_WRONLY, "wo"), (os.O_RDWR, "rw")):
    for m, want in ((0o4777, 0o777), (0o2777, 0o777), (0o6777, 0o777),
                    (0o2767, 0o2767), (0o4755, 0o755)):
        p = mk("w-%s-%o" % (tag, m), m)
        fd = os.open(p, flags)
        os.write(fd, b"x")
        got = stat.S_IMODE(os.fstat(fd).st_mode)
        assert got == want, ("write", tag, oct(m), oct(got))
        os.close(fd)
        assert mode(p) == want, ("write", tag, oct(m), oct(mode(p)))
p = mk("t", 0o4777)
os.truncate(p, 3)
assert mode(p) == 0o777, ("truncate", oct(mode(p)))
p = mk("ft", 0o6777)
fd = os.open(p, os.O_RDWR)
os.ftruncate(fd, 3)
assert stat.S_IMODE(os.fstat(fd).st_mode) == 0o777, ("ftruncate", oct(os.fstat(fd).st_mode))
os.close(fd)
p = mk("ot", 0o4777)
os.close(os.open(p, os.O_WRONLY | os.O_TRUNC))
assert mode(p) == 0o777, ("O_TRUNC", oct(mode(p)))
p = mk("fa", 0o4777)
fd = os.open(p, os.O_WRONLY)
os.posix_fallocate(fd, 0, 1 << 16)
os.close(fd)
assert mode(p) == 0o777, ("fallocate", oct(mode(p)))
p = mk("keep", 0o4777)      # for root, below
p = mk("ch", 0o6755)        # for root's chown, below
p = mk("ch2", 0o2745)
PY
info "a write, truncate, O_TRUNC or fallocate by the owner clears set-id bits"

/usr/bin/python3 - "$V" <<'PY' || fail "set-id bits as root"
import os, stat, sys
d = sys.argv[1]
def mode(p):
    return stat.S_IMODE(os.stat(p).st_mode)
p = d + "/keep"
fd = os.open(p, os.O_WRONLY)
os.write(fd, b"root")
os.ftruncate(fd, 2)
os.close(fd)
assert mode(p) == 0o4777, ("root write", oct(mode(p)))
os.chown(d + "/ch", -1, 0)
assert mode(d + "/ch") == 0o755, ("chown", oct(mode(d + "/ch")))
os.chown(d + "/ch2", 0, -1)
assert mode(d + "/ch2") == 0o2745, ("chown, no group execute", oct(mode(d + "/ch2")))
PY
info "root keeps them on write and truncate; chown clears them"

as "$U" mv "$V" "$M/kp/v1" || fail "commit failed"
ctl d --json ls kp v1 >"$T/ls.json" || fail "ckptctl ls failed"
/usr/bin/python3 - "$T/ls.json" <<'PY' || fail "modes in the committed version: $(head -c 800 "$T/ls.json")"
import json, sys
doc = json.load(open(sys.argv[1]))
files = doc["files"] if isinstance(doc, dict) else doc
modes = {f["path"]: f["attr"]["mode"] if "attr" in f else f["mode"] for f in files}
want = {"w-wo-4777": 0o777, "w-rw-6777": 0o777, "w-wo-2767": 0o2767,
        "t": 0o777, "ot": 0o777, "fa": 0o777, "keep": 0o4777, "ch": 0o755}
for p, m in want.items():
    assert modes[p] & 0o7777 == m, (p, oct(modes[p]), oct(m))
PY
info "committed: the cleared modes"

# Drained, its local copy removed, ckptd killed: the version is read from
# the PFS, whose manifest carries the set-id bits the owner kept (02767 on
# its own file and group) and the root owner of ch2, and a restore as root
# gives them back.  Stop 35's rule for PFS manifests refused every set-id
# bit and foreign owner in a non-root uid's version, so such a version
# could not be evicted nor read from the PFS.
ctl d wait kp v1 drained --timeout 30 || fail "kp/v1 did not drain"
ctl d rm kp v1 >/dev/null || fail "rm of the local copy failed"
umount_ckptfs "$M"
restart d
ctl d ls kp | grep -qw v1 || fail "kp/v1 is gone after the restart: $(ctl d ls kp 2>&1)"
ctl d restore kp v1 --to "$T/r" >/dev/null || fail "restore of kp/v1 from the PFS failed"
[ "$(stat -c %a:%U "$T/r/w-wo-2767")" = "2767:$U" ] ||
	fail "restored w-wo-2767: $(stat -c %a:%U "$T/r/w-wo-2767")"
[ "$(stat -c %a:%u "$T/r/ch2")" = "2745:0" ] ||
	fail "restored ch2 (root chowned it): $(stat -c %a:%u "$T/r/ch2")"
info "drained, evicted and restarted: read from the PFS with its set-gid bit"
stop_ckptd d
