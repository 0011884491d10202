#!/bin/bash
# t_fuse_python: real clients that nobody here wrote, writing through ckptfs
# exactly as trainers do, with Debian's /usr/bin/python3 and its packages.
#  numpy:  np.save of a 256 MiB float32 array into a tmp file inside
#          VER.tmp, f.flush() + os.fsync(), os.rename() into place, plus an
#          np.savez (a zip); commit by renaming VER.tmp to VER; np.load it
#          back and compare (and cmp with the same np.save on local disk).
#  numpy-mmap: np.load(..., mmap_mode="r") of the committed file (what
#          large-array readers do).
#  torch:  torch.save of a ~100 MB state dict (float32, float16, bfloat16,
#          int64, a nested dict) to a file object (+ fsync + rename) and to a
#          path (torch's own writer); torch.load back, tensor by tensor.
#  h5py:   an HDF5 file with groups, attributes, a gzip-chunked dataset grown
#          by resize, and a chunked dataset filled in random order (random
#          writes), then reopened r+ and patched while the version is open;
#          committed and read back, every dataset compared.
#  drain-restore: with a drain to a PFS directory, numpy (np.save), torch
#          (torch.save) and h5py files written through the mount into
#          VER.tmp and, the same, to local disk; after the commit, after the
#          drain (the PFS copy, and the mount once the local copy is
#          dropped and the version is read from the PFS), and after
#          `ckptctl restore --to DIR` (from the local copy, then from the
#          PFS alone) each file is cmp-equal to its local twin and loads
#          back (np.load with mmap_mode="r" too) equal to what was saved.
# A case whose module /usr/bin/python3 cannot import is skipped with a
# message (the test installs nothing); if none can run, the test is skipped.
# TIMEOUT: 300
set -u
. "$(dirname "$0")/lib.sh"
need_fuse

PY=/usr/bin/python3
JOB=py
M=$T/mnt

[ -x "$PY" ] || skip "$PY is missing"
have() { "$PY" -c "import $1" 2>/dev/null; }
missing() {
	info "[$1] skipped: $PY cannot import $1 (Debian package $2 is not installed; this test installs nothing)"
	exit 77
}
if ! have numpy && ! have torch && ! have h5py; then
	skip "$PY can import none of numpy, torch, h5py (Debian python3-numpy, python3-torch, python3-h5py): nothing to run"
fi

sealed() {
	[ "$(ctl p ls "$JOB" 2>/dev/null | awk -v v="$1" '$1 == v { print $2 }')" = sealed ]
}

# setup: a ckptd and the mount, and an open version VER.tmp.
setup() {
	ckptd_conf p keep=100 staging=256M staging_client=32M
	start_ckptd p
	mount_ckptfs p "$M"
	mkdir -p "$M/$JOB/$1.tmp" || fail "mkdir $JOB/$1.tmp"
}

# commit VER: rename VER.tmp to VER; wait until ckptd sealed it.
commit() {
	mv "$M/$JOB/$1.tmp" "$M/$JOB/$1" || fail "mv $1.tmp $1 (commit) failed"
	poll_until 60 sealed "$1" || fail "$1 is not sealed after the rename"
	ctl p verify "$JOB" "$1" >/dev/null || fail "ckptctl verify $1 failed"
}

# py WHAT SCRIPT ARGS...: run a Python script; fail with its last lines.
py() {
	local what=$1 script=$2
	shift 2
	"$PY" -c "$script" "$@" >"$T/py.out" 2>&1 || fail "$what: $(tail -5 "$T/py.out")"
	[ -s "$T/py.out" ] && info "$(cat "$T/py.out")"
	return 0
}

# ---- numpy ------------------------------------------------------------------

NP_SAVE='
import os, sys, time
import numpy as np
vdir, ref = sys.argv[1], sys.argv[2]
a = np.random.default_rng(42).standard_normal((8192, 8192), dtype=np.float32)
t0 = time.monotonic()
tmp = os.path.join(vdir, "weights.npy.tmp")
with open(tmp, "wb") as f:
    np.save(f, a)
    f.flush()
    os.fsync(f.fileno())
os.rename(tmp, os.path.join(vdir, "weights.npy"))
t1 = time.monotonic()
np.save(ref, a)
rng = np.random.default_rng(7)
np.savez(os.path.join(vdir, "extra.npz"), ids=rng.integers(0, 1 << 40, 100000),
         mask=rng.random(300000) < 0.5, name=np.array("step-1200"))
print("np.save of %d MiB + fsync + rename: %.2f s" % (a.nbytes >> 20, t1 - t0))
'

NP_LOAD='
import sys
import numpy as np
vdir, mode = sys.argv[1], sys.argv[2]
a = np.random.default_rng(42).standard_normal((8192, 8192), dtype=np.float32)
b = np.load(vdir + "/weights.npy", mmap_mode=("r" if mode == "mmap" else None))
assert b.dtype == a.dtype and b.shape == a.shape, (b.dtype, b.shape)
assert np.array_equal(a, b), "weights.npy differs"
if mode == "mmap":
    assert np.array_equal(np.asarray(b[4000:4100, ::7]), a[4000:4100, ::7])
    sys.exit(0)
rng = np.random.default_rng(7)
with np.load(vdir + "/extra.npz") as z:
    assert np.array_equal(z["ids"], rng.integers(0, 1 << 40, 100000))
    assert np.array_equal(z["mask"], rng.random(300000) < 0.5)
    assert str(z["name"]) == "step-1200"
'

numpy_case() {
	have numpy || missing numpy python3-numpy
	setup np1
	py "np.save into np1.tmp" "$NP_SAVE" "$M/$JOB/np1.tmp" "$T/ref.npy"
	[ ! -e "$M/$JOB/np1.tmp/weights.npy.tmp" ] || fail "the tmp file is still there after os.rename"
	cmp "$T/ref.npy" "$M/$JOB/np1.tmp/weights.npy" || fail "weights.npy differs while the version is open"
	commit np1
	cmp "$T/ref.npy" "$M/$JOB/np1/weights.npy" || fail "weights.npy differs from np.save on local disk"
	py "np.load from np1" "$NP_LOAD" "$M/$JOB/np1" read
	umount_ckptfs "$M"
	mount_ckptfs p "$M"
	py "np.load from np1 after a remount" "$NP_LOAD" "$M/$JOB/np1" read
	umount_ckptfs "$M"
	info "[numpy] np.save (tmp + fsync + rename) in VER.tmp, commit, np.load: equal"
}

numpy_mmap_case() {
	have numpy || missing numpy python3-numpy
	setup mm1
	py "np.save into mm1.tmp" "$NP_SAVE" "$M/$JOB/mm1.tmp" "$T/ref.npy"
	commit mm1
	py "np.load(mmap_mode='r') from mm1" "$NP_LOAD" "$M/$JOB/mm1" mmap
	umount_ckptfs "$M"
	info "[numpy-mmap] np.load(mmap_mode='r') of a committed file: equal"
}

# ---- torch ------------------------------------------------------------------

TORCH_COMMON='
import os, sys
import torch
def state():
    g = torch.Generator().manual_seed(1234)
    return {
        "layer1.weight": torch.randn(4096, 4096, generator=g),
        "layer1.bias": torch.randn(4096, generator=g),
        "emb.ids": torch.randint(0, 50000, (2 << 20,), generator=g, dtype=torch.int64),
        "attn.half": torch.randn(2048, 2048, generator=g).half(),
        "norm.bf16": torch.randn(1024, 1024, generator=g).to(torch.bfloat16),
        "step": torch.tensor(1200),
        "optimizer": {"exp_avg": torch.randn(1000, 1000, generator=g), "lr": 3e-4},
    }
def same(a, b, where):
    if isinstance(a, dict):
        assert isinstance(b, dict) and sorted(a) == sorted(b), (where, sorted(b))
        for k in a:
            same(a[k], b[k], where + "." + k)
    elif isinstance(a, torch.Tensor):
        assert isinstance(b, torch.Tensor), where
        assert a.dtype == b.dtype and a.shape == b.shape, (where, b.dtype, b.shape)
        assert torch.equal(a, b), where + " differs"
    else:
        assert a == b, (where, a, b)
'
TORCH_SAVE=$TORCH_COMMON'
import time
vdir = sys.argv[1]
sd = state()
t0 = time.monotonic()
tmp = os.path.join(vdir, "model.pt.tmp")
with open(tmp, "wb") as f:
    torch.save(sd, f)
    f.flush()
    os.fsync(f.fileno())
os.rename(tmp, os.path.join(vdir, "model.pt"))
t1 = time.monotonic()
torch.save(sd, os.path.join(vdir, "by-path.pt"))
n = sum(t.numel() * t.element_size() for t in list(sd.values()) + list(sd["optimizer"].values()) if isinstance(t, torch.Tensor))
print("torch.save of %d MiB + fsync + rename: %.2f s" % (n >> 20, t1 - t0))
'
TORCH_LOAD=$TORCH_COMMON'
vdir = sys.argv[1]
sd = state()
for name in ("model.pt", "by-path.pt"):
    same(sd, torch.load(os.path.join(vdir, name), map_location="cpu"), name)
'

torch_case() {
	have torch || missing torch python3-torch
	setup pt1
	py "torch.save into pt1.tmp" "$TORCH_SAVE" "$M/$JOB/pt1.tmp"
	[ ! -e "$M/$JOB/pt1.tmp/model.pt.tmp" ] || fail "the tmp file is still there after os.rename"
	commit pt1
	py "torch.load from pt1" "$TORCH_LOAD" "$M/$JOB/pt1"
	umount_ckptfs "$M"
	mount_ckptfs p "$M"
	py "torch.load from pt1 after a remount" "$TORCH_LOAD" "$M/$JOB/pt1"
	umount_ckptfs "$M"
	info "[torch] torch.save (file object + fsync + rename, and by path), commit, torch.load: every tensor equal"
}

# ---- h5py -------------------------------------------------------------------

H5_COMMON='
import random, sys
import numpy as np
import h5py
def expected():
    rng = np.random.default_rng(3)
    w = rng.standard_normal((1000, 1000))
    grow = [rng.standard_normal((100, 256)).astype("f4") for _ in range(20)]
    scatter = np.zeros((4096, 1024), dtype="i4")
    blocks = [(r, c) for r in range(0, 4096, 128) for c in range(0, 1024, 128)]
    random.Random(9).shuffle(blocks)
    vals = {}
    for i, (r, c) in enumerate(blocks):
        vals[(r, c)] = rng.integers(-1 << 30, 1 << 30, (128, 128), dtype="i4")
        scatter[r:r + 128, c:c + 128] = vals[(r, c)]
    patch = rng.standard_normal((50, 1000))
    return w, grow, scatter, blocks, vals, patch
'
H5_WRITE=$H5_COMMON'
path = sys.argv[1]
w, grow, scatter, blocks, vals, patch = expected()
with h5py.File(path, "w") as f:
    f.attrs["step"] = 1200
    g = f.create_group("model/layers")
    g.create_dataset("w", data=w)
    g.attrs["name"] = "layer0"
    d = f.create_dataset("grow", shape=(0, 256), maxshape=(None, 256), chunks=(64, 256),
                         dtype="f4", compression="gzip")
    for part in grow:
        d.resize(d.shape[0] + 100, axis=0)
        d[-100:] = part
    e = f.create_dataset("scatter", shape=(4096, 1024), dtype="i4", chunks=(128, 128))
    for (r, c) in blocks:
        e[r:r + 128, c:c + 128] = vals[(r, c)]
# Reopen and patch while the version is still open.
with h5py.File(path, "r+") as f:
    f["model/layers/w"][100:150] = patch
    f.attrs["patched"] = True
    f.create_dataset("late", data=np.arange(12345))
'
H5_READ=$H5_COMMON'
path = sys.argv[1]
w, grow, scatter, blocks, vals, patch = expected()
w[100:150] = patch
with h5py.File(path, "r") as f:
    assert f.attrs["step"] == 1200 and bool(f.attrs["patched"])
    assert f["model/layers"].attrs["name"] == "layer0"
    assert np.array_equal(f["model/layers/w"][...], w), "w differs"
    assert np.array_equal(f["grow"][...], np.concatenate(grow)), "grow differs"
    assert np.array_equal(f["scatter"][...], scatter), "scatter differs"
    assert np.array_equal(f["late"][...], np.arange(12345)), "late differs"
'

h5py_case() {
	have h5py || missing h5py python3-h5py
	setup h1
	py "h5py writing into h1.tmp" "$H5_WRITE" "$M/$JOB/h1.tmp/ckpt.h5"
	py "h5py reading h1.tmp (open version)" "$H5_READ" "$M/$JOB/h1.tmp/ckpt.h5"
	commit h1
	py "h5py reading h1" "$H5_READ" "$M/$JOB/h1/ckpt.h5"
	umount_ckptfs "$M"
	info "[h5py] groups, attributes, gzip chunks grown by resize, random chunk writes, r+ patch: equal"
}

# ---- the PFS and ckptctl restore ----------------------------------------------

# RT_PY write DIR MODULES | load DIR MODULES: write (or load and compare)
# weights.npy (np.save, 32 MiB float32), model.pt (torch.save of a state
# dict of float32, float16, bfloat16 and int64 tensors) and ckpt.h5 (h5py:
# a dataset, a gzip-chunked one written bottom up, attributes), for the
# MODULES (comma-separated) that can be imported.
RT_PY='
import os, sys
op, d, mods = sys.argv[1], sys.argv[2], sys.argv[3].split(",")
def arr():
    import numpy as np
    return np.random.default_rng(11).standard_normal((2048, 4096), dtype=np.float32)
def state():
    import torch
    g = torch.Generator().manual_seed(12)
    return {"w": torch.randn(1024, 2048, generator=g),
            "h": torch.randn(1024, 1024, generator=g).half(),
            "bf": torch.randn(512, 512, generator=g).to(torch.bfloat16),
            "ids": torch.randint(0, 1 << 40, (100000,), generator=g, dtype=torch.int64),
            "step": 1200}
def h5data():
    import numpy as np
    rng = np.random.default_rng(13)
    return rng.standard_normal((1000, 1000)), rng.integers(-1 << 30, 1 << 30, (512, 512), dtype="i4")
if op == "write":
    if "numpy" in mods:
        import numpy as np
        np.save(os.path.join(d, "weights.npy"), arr())
    if "torch" in mods:
        import torch
        torch.save(state(), os.path.join(d, "model.pt"))
    if "h5py" in mods:
        import h5py
        w, s = h5data()
        with h5py.File(os.path.join(d, "ckpt.h5"), "w") as f:
            f.attrs["step"] = 1200
            f.create_dataset("model/w", data=w)
            e = f.create_dataset("s", shape=s.shape, dtype="i4", chunks=(64, 64), compression="gzip")
            for r in reversed(range(0, 512, 64)):
                e[r:r + 64] = s[r:r + 64]
    sys.exit(0)
n = 0
if "numpy" in mods:
    import numpy as np
    a = np.load(os.path.join(d, "weights.npy"), mmap_mode="r")
    assert isinstance(a, np.memmap), type(a)
    assert a.dtype == np.float32 and a.shape == (2048, 4096), (a.dtype, a.shape)
    assert np.array_equal(a, arr()), "weights.npy (mmap_mode=r) differs"
    assert np.array_equal(np.load(os.path.join(d, "weights.npy")), arr()), "weights.npy differs"
    n += 1
if "torch" in mods:
    import torch
    a, b = state(), torch.load(os.path.join(d, "model.pt"), map_location="cpu")
    assert sorted(a) == sorted(b), sorted(b)
    for k in a:
        if isinstance(a[k], torch.Tensor):
            assert a[k].dtype == b[k].dtype and torch.equal(a[k], b[k]), "model.pt: " + k + " differs"
        else:
            assert a[k] == b[k], (k, b[k])
    n += 1
if "h5py" in mods:
    import h5py
    import numpy as np
    w, s = h5data()
    with h5py.File(os.path.join(d, "ckpt.h5"), "r") as f:
        assert f.attrs["step"] == 1200
        assert np.array_equal(f["model/w"][...], w), "ckpt.h5: model/w differs"
        assert np.array_equal(f["s"][...], s), "ckpt.h5: s differs"
    n += 1
print("%d files load back equal from %s" % (n, d))
'

# rt_same DIR WHAT: DIR holds exactly the files written to $T/ref (but a
# .commit marker), each cmp-equal to its local twin.
rt_same() {
	local f
	[ "$(cd "$1" && find . -mindepth 1 ! -path ./.commit | LC_ALL=C sort)" = \
		"$(cd "$T/ref" && find . -mindepth 1 | LC_ALL=C sort)" ] ||
		fail "$2: the files are $(cd "$1" && find . -mindepth 1 | LC_ALL=C sort | tr '\n' ' '), want $(cd "$T/ref" && find . -mindepth 1 | LC_ALL=C sort | tr '\n' ' ')"
	for f in "$T"/ref/*; do
		f=${f##*/}
		cmp "$T/ref/$f" "$1/$f" >"$T/cmp.out" 2>&1 ||
			fail "$2: $f differs from the same file written to local disk: $(cat "$T/cmp.out")"
	done
}

# copies VER: where VER's copies are (`ckptctl --json ls JOB`), as "local,pfs".
copies() {
	ctl p --json ls "$JOB" | "$PY" -c '
import json, sys
for v in json.load(sys.stdin)["versions"]:
    if v["version"] == sys.argv[1]:
        print(",".join(v["copies"]))' "$1"
}

drain_restore_case() {
	local mods=() m
	for m in numpy torch h5py; do
		have "$m" && mods+=("$m")
	done
	[ ${#mods[@]} -gt 0 ] || missing "numpy, torch or h5py" "python3-numpy, python3-torch or python3-h5py"
	m=$(IFS=,; echo "${mods[*]}")
	# A store of its own: not the versions of the cases before (same name).
	rm -rf "$T/p"
	PFS=$T/pfs
	drain_conf p -- keep=100 staging=256M staging_client=32M
	start_ckptd p
	mount_ckptfs p "$M"
	mkdir -p "$M/$JOB/dr1.tmp" "$T/ref" || fail "mkdir $JOB/dr1.tmp"
	py "writing $m files into dr1.tmp" "$RT_PY" write "$M/$JOB/dr1.tmp" "$m"
	py "writing $m files to local disk" "$RT_PY" write "$T/ref" "$m"
	rt_same "$M/$JOB/dr1.tmp" "open version"
	commit dr1
	rt_same "$M/$JOB/dr1" "committed version"
	py "loading from the committed version" "$RT_PY" load "$M/$JOB/dr1" "$m"
	ctl p wait "$JOB" dr1 drained --timeout "$(scaled 60)" >/dev/null ||
		fail "dr1 did not reach DRAINED: $(ctl p ls "$JOB" 2>&1 | grep '^dr1 ')"
	rt_same "$(pfs_vdir "$JOB" dr1)/files" "PFS copy"
	py "loading from the PFS copy" "$RT_PY" load "$(pfs_vdir "$JOB" dr1)/files" "$m"
	ctl p restore "$JOB" dr1 --to "$T/r-local" >/dev/null || fail "ckptctl restore of dr1 failed"
	rt_same "$T/r-local" "ckptctl restore (from the local copy)"
	# Drop the local copy: the mount and restore read the PFS alone.
	ctl p rm "$JOB" dr1 >/dev/null || fail "ckptctl rm of the local copy of dr1 failed"
	[ "$(copies dr1)" = pfs ] || fail "after rm, dr1's copies are '$(copies dr1)', want pfs"
	ctl p restore "$JOB" dr1 --to "$T/r-pfs" >/dev/null || fail "ckptctl restore of dr1 from the PFS failed"
	rt_same "$T/r-pfs" "ckptctl restore from the PFS"
	py "loading from the restore from the PFS" "$RT_PY" load "$T/r-pfs" "$m"
	# A fresh mount (nothing in the page cache) reads the PFS copy.
	umount_ckptfs "$M"
	mount_ckptfs p "$M"
	rt_same "$M/$JOB/dr1" "the mount reading from the PFS"
	py "loading through the mount from the PFS" "$RT_PY" load "$M/$JOB/dr1" "$m"
	umount_ckptfs "$M"
	info "[drain-restore] $m: cmp-equal to local disk after commit, on the PFS, through the mount from the PFS, after restore (local, PFS); loaded back equal"
}

subtest numpy numpy_case
subtest numpy-mmap numpy_mmap_case
subtest torch torch_case
subtest h5py h5py_case
subtest drain-restore drain_restore_case
finish
