#!/bin/bash
# t_fuse_mmap: mmap through ckptfs.  Files opened for reading use the page
# cache, write-only ones the direct 1 MiB path (docs/design.md).
#  - C (ckpt_mmap): in a version being written, shared and private read
#    mappings see write(), pwrite and a write-only handle's writes; private
#    changes stay private; a shared writable mapping (grown by ftruncate,
#    msync'd, or written after its fd is closed) reaches the file; after the
#    commit every file maps shared and private with the same bytes, and a
#    writable shared mapping of a committed file is refused;
#  - numpy: np.save, then np.load(mmap_mode="r") in the open version and
#    in the committed one, np.load(mmap_mode="r+") changes written back,
#    and the committed bytes are the expected ones after a drain-free
#    remount (the page cache dropped).
# TIMEOUT: 120
set -u
. "$(dirname "$0")/lib.sh"
need_fuse

MM=$BUILD/tests/ckpt_mmap
[ -x "$MM" ] || fail "$MM is not built (make check-integ builds it)"
M=$T/mnt
REF=$T/ref
mkdir -p "$REF"

ckptd_conf d
start_ckptd d
mount_ckptfs d "$M"

mkdir -p "$M/mm/v1.tmp" || fail "mkdir failed"
"$MM" write "$M/mm/v1.tmp" "$REF" || fail "mappings in an open version"
"$MM" check "$M/mm/v1.tmp" "$REF" || fail "mappings of an open version, read back"
mv "$M/mm/v1.tmp" "$M/mm/v1" || fail "commit failed"
"$MM" check "$M/mm/v1" "$REF" || fail "mappings of the committed version"

if /usr/bin/python3 -c 'import numpy' 2>/dev/null; then
	mkdir "$M/mm/np.tmp" || fail "mkdir np.tmp failed"
	/usr/bin/python3 - "$M/mm/np.tmp" "$REF" <<'PY' || fail "numpy in an open version"
import sys, numpy as np
d, ref = sys.argv[1], sys.argv[2]
a = np.arange(3_000_000, dtype=np.float32).reshape(1000, 3000)
np.save(d + "/a.npy", a)
m = np.load(d + "/a.npy", mmap_mode="r")
assert (m == a).all(), "mmap_mode=r differs"
w = np.load(d + "/a.npy", mmap_mode="r+")
w[7, :] = -1.0
w.flush()
del w, m
a[7, :] = -1.0
assert (np.load(d + "/a.npy") == a).all(), "r+ changes not written back"
np.save(ref + "/a.npy", a)
PY
	mv "$M/mm/np.tmp" "$M/mm/np" || fail "commit of np failed"
	umount_ckptfs "$M"
	mount_ckptfs d "$M"
	/usr/bin/python3 - "$M/mm/np" "$REF" <<'PY' || fail "numpy in the committed version"
import sys, numpy as np
d, ref = sys.argv[1], sys.argv[2]
m = np.load(d + "/a.npy", mmap_mode="r")
assert (m == np.load(ref + "/a.npy")).all(), "committed mmap differs"
assert open(d + "/a.npy", "rb").read() == open(ref + "/a.npy", "rb").read()
PY
	info "numpy: np.save, np.load(mmap_mode=r and r+), committed and remounted"
else
	info "numpy not importable by /usr/bin/python3: its part skipped"
fi

umount_ckptfs "$M"
stop_ckptd d
